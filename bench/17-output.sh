#!/usr/bin/env bash
# Output rows: about 170 MB of bash output (seq 1 20000000) through the bash tool,
# which now streams the whole output into a spill file under .tinytool/outputs/ (kept to
# 64 MB) while it keeps only the preview in memory, against the same command writing to
# /dev/null: time (acceptance: at most 1.3x) and peak memory (acceptance: under 32 MiB).
# The spill folder is capped at 256 MB by default, so repeated runs do not fill the disk.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir="$BENCH_CACHE/output-17"
mkdir -p "$dir"
command="seq 1 20000000"
ours="$TT --dir $dir bash --command '$command'"
peer="sh -c '$command > /dev/null'"

# The figures mean something only if the output reaches the spill file: its line
# 5,000,001 (read with offset 5000000; inside the 64 MB the file keeps) is 5000001.
spill=$("$TT" --dir "$dir" bash --command "$command" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["full_output"])')
line=$("$TT" --dir "$dir" --text read --file-path "$spill" --offset 5000000 --limit 1 | head -n 1)
[ "$line" = "$(printf '5000001\t5000001')" ] ||
    bench_note "output: line 5000001 of the spill file reads '$line'"

BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "bash: 170 MB of output, spilled" "$ours" "to /dev/null" "$peer"
mem_row "bash: 170 MB of output, spilled" "$ours" "to /dev/null" "$peer"
# Any reader of the output pays for the pipe: the same output read by `cat` is the floor.
piped="sh -c '$command | cat > /dev/null'"
BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "bash: 170 MB of output, spilled" "$ours" "piped to cat" "$piped"

bench_note "budget: 170 MB of bash output with its spill file peaks under 32 MiB, time at most 1.3x /dev/null"
