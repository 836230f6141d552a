#!/usr/bin/env bash
# bash rows: about 170 MB of output (seq 1 20000000) through the bash tool against
# the same command writing to /dev/null: time and peak memory. The tool keeps only the first
# and last lines of what a command prints, so its memory must not grow with the output.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command="seq 1 20000000"
# A small project of its own: the whole bench cache is past the sandbox's secret-scan limit
# (its 100,000-file tree), where a sandboxed command is refused.
project="$BENCH_TMP/bash-project"
mkdir -p "$project"
ours="$TT --dir $project bash --command '$command'"
peer="sh -c '$command > /dev/null'"

# The figures mean something only if the call succeeds and previews the real end.
tail_line=$("$TT" --dir "$project" --text bash --command "$command" | tail -n 1)
[ "$tail_line" = "20000000" ] ||
    bench_note "bash: the preview of seq 1 20000000 ends with '$tail_line', not 20000000"

BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "bash: 170 MB of output" "$ours" "to /dev/null" "$peer"
mem_row "bash: 170 MB of output" "$ours" "to /dev/null" "$peer"

bench_note "budget: 170 MB of output peaks under 64 MiB; the preview ends with 20000000"
