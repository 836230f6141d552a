#!/usr/bin/env bash
# Foundation rows: start-up against cat, one `exec --jsonl` process against one
# process per call, and a page late in a 1 GB file against sed (time and peak memory).
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Start-up: the whole cost of a direct call on a small file.
small=$(bench_cached small-20.txt 'seq -f "line %.0f of a small file" 1 20')
bench_row "start-up: read a 20-line file" \
    "$TT --dir $BENCH_CACHE read --file-path small-20.txt" "cat" "cat $small"

# 10,000 read calls: one persistent process against 10,000 processes (xargs starts them).
# shellcheck disable=SC2016 # the generator is expanded by bench_cached's shell
calls=$(bench_cached read-calls-10k.jsonl \
    'for i in $(seq 1 10000); do printf "{\"id\":\"c%d\",\"name\":\"read\",\"arguments\":{\"file_path\":\"small-20.txt\"}}\n" "$i"; done')
paths=$(bench_cached read-paths-10k.txt 'yes small-20.txt | head -n 10000')
# Timing a stream of refusals would mean nothing: every call must succeed.
ok=$("$TT" --dir "$BENCH_CACHE" exec --jsonl <"$calls" | grep -c '"is_error":false' || true)
[ "$ok" -eq 10000 ] || bench_note "exec --jsonl: only $ok of 10,000 calls succeeded"
BENCH_RUNS=3 BENCH_WARMUP=1 bench_row "10,000 reads: exec --jsonl" \
    "$TT --dir $BENCH_CACHE exec --jsonl < $calls" \
    "10,000 processes" "xargs -a $paths -L 1 $TT --dir $BENCH_CACHE read --file-path"

# A page late in a 1 GB file: 10,000,000 lines of 100 bytes; lines 1,000,000-1,002,000.
big=$(bench_cached lines-1g.txt \
    'awk "BEGIN { for (i = 1; i <= 10000000; i++) printf \"%09d %-89.89s\\n\", i, \"the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs\" }"')
page="$TT --dir $BENCH_CACHE read --file-path $(basename "$big") --offset 999999 --limit 2000"
peer="sed -n '1000000,1002000p' $big"
BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "1 GB file: page at line 1,000,000" "$page" "sed -n" "$peer"
mem_row "1 GB file: page at line 1,000,000" "$page" "sed -n" "$peer"

bench_note "budget: start-up ratio within 3x of cat; the 1 GB page peaks under 32 MiB"
