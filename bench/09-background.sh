#!/usr/bin/env bash
# monitor and task rows: what the supervision costs per call.
# - task, foreground: a `cat` subagent through the task tool (config, policy, its own session
#   and process group, captured output) against piping the prompt into cat directly;
# - monitor, start + stop: a detached supervisor started, its handshake, its group killed
#   and reaped, both calls recorded in SQLite, against a shell starting and killing a
#   background sleep.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

project="$BENCH_TMP/background"
mkdir -p "$project/.tinytool"
cat >"$project/.tinytool/config.json" <<'EOF'
{"subagents": {"build": {"command": ["cat"]}}}
EOF
# A command the project config names runs only when the user policy allows it.
policy="$project/user-policy.json"
echo '{"rules": [{"permission": "shell", "pattern": "cat", "action": "allow"}]}' >"$policy"
printf '#!/bin/sh\nexec %s --policy %s "$@"\n' "$TT" "$policy" >"$project/tt"
chmod +x "$project/tt"
TT="$project/tt"

# The figures mean something only if the calls do what they should.
answer=$("$TT" --dir "$project" --text task --description bench --prompt hello)
[ "$answer" = "hello" ] || bench_note "task: the cat subagent answered '$answer', not hello"
started=$("$TT" --dir "$project" --text monitor --command 'sleep 30')
id=$(printf '%s\n' "$started" | sed -n 's/.*(ID: \(mon_[0-9]*\)).*/\1/p')
stopped=$("$TT" --dir "$project" --text monitor --action stop --monitor-id "$id")
[ "$stopped" = "Monitor $id stopped" ] || bench_note "monitor: stop answered '$stopped'"

# Shell text lives in scripts so that both sides run without hyperfine's shell correction.
printf '%s\n' 'echo hello | cat' >"$project/peer-task.sh"
printf '%s\n' 'sleep 30 & kill $!' >"$project/peer-monitor.sh"
cat >"$project/cycle.sh" <<EOF
id=\$("$TT" --dir "$project" --text monitor --command 'sleep 30' | sed -n 's/.*(ID: \\(mon_[0-9]*\\)).*/\\1/p')
"$TT" --dir "$project" --text monitor --action stop --monitor-id "\$id" >/dev/null
EOF
[ "$(sh "$project/cycle.sh" && echo ok)" = "ok" ] || bench_note "monitor: the start + stop script failed"

bench_row "task: foreground cat subagent" \
    "$TT --dir $project task --description bench --prompt hello" \
    "sh: echo | cat" "sh $project/peer-task.sh"
BENCH_WARMUP=1 bench_row "monitor: start + stop" "sh $project/cycle.sh" \
    "sh: sleep & kill" "sh $project/peer-monitor.sh"

bench_note "monitor: start + stop is two tinytool calls, a supervisor process, its sentinel and their SQLite writes"
