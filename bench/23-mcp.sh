#!/usr/bin/env bash
# MCP rows: what the protocol layer costs per call, on the same 20-line read as start-up.
# - 10,000 reads sent at once to `tinytool mcp` on stdio against the same reads through
#   `exec --jsonl` (one process each: the difference is JSON-RPC, the worker pool and the
#   result shape);
# - 1,000 reads one at a time (each waits for its answer) over Streamable HTTP on one
#   keep-alive connection against the same over stdio (bench/mcp-client.py drives both:
#   the difference is the HTTP transport).
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

small=$(bench_cached small-20.txt 'seq -f "line %.0f of a small file" 1 20')
# shellcheck disable=SC2016 # the generator is expanded by bench_cached's shell
session=$(bench_cached mcp-read-calls-10k.jsonl \
    'printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}" "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"; for i in $(seq 1 10000); do printf "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"file_path\":\"small-20.txt\"}}}\n" "$i"; done')
# shellcheck disable=SC2016
calls=$(bench_cached read-calls-10k.jsonl \
    'for i in $(seq 1 10000); do printf "{\"id\":\"c%d\",\"name\":\"read\",\"arguments\":{\"file_path\":\"small-20.txt\"}}\n" "$i"; done')
# Timing a stream of errors would mean nothing: every call must be answered with its file.
ok=$("$TT" --dir "$BENCH_CACHE" mcp <"$session" | grep -c '"isError":false' || true)
[ "$ok" -eq 10000 ] || bench_note "mcp stdio: only $ok of 10,000 reads succeeded"
BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "10,000 reads at once: mcp stdio" \
    "$TT --dir $BENCH_CACHE mcp < $session" \
    "exec --jsonl" "$TT --dir $BENCH_CACHE exec --jsonl < $calls"

client="$BENCH_ROOT/bench/mcp-client.py"
BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "1,000 reads one at a time: mcp HTTP" \
    "python3 $client http $TT $BENCH_CACHE $(basename "$small") 1000" \
    "mcp stdio" "python3 $client stdio $TT $BENCH_CACHE $(basename "$small") 1000"
