#!/usr/bin/env bash
# Language-server rows (diagnostics after every change), per language, against the same
# server driven directly by bench/lsp-direct.py:
# - warm: a write whose content differs every time (a new undefined name), answered by the
#   warm server through the project's broker, in a separate CLI process each time, against
#   the server's own didChange → diagnostics time, asked the same way (and, as a note, the
#   time until the server publishes on its own);
# - the cost per write of the diagnostics layer (the same writes with lsp.enabled false);
# - cold: the first write after `tinytool lsp stop` (the server starts) against starting
#   the server, opening the file and waiting for its diagnostics directly;
# - peak memory of the server's processes, both ways.
# The servers are the npm pins the tests use, installed into BENCH_CACHE.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

servers="$BENCH_CACHE/lsp-servers"
pins=(pyright@1.1.414 typescript-language-server@5.3.0 typescript@6)
if [ ! -e "$servers/installed-${pins[*]// /+}" ]; then
    mkdir -p "$servers"
    echo '{"private": true}' >"$servers/package.json"
    if ! (cd "$servers" && npm install --no-audit --no-fund --silent "${pins[@]}" >&2); then
        bench_note "lsp: the servers could not be installed from npm; no language-server rows"
        exit 0
    fi
    touch "$servers/installed-${pins[*]// /+}"
fi
export PATH="$servers/node_modules/.bin:$PATH"
direct="$BENCH_ROOT/bench/lsp-direct.py"

# A figure of a JSON document: EXPR over it as `v` (Python).
json_get() {
    python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

# Seconds of one command, the median of N runs.
median_ms() {
    local n="$1"; shift
    for ((i = 0; i < n; i++)); do
        local start end
        start=$(date +%s%N)
        "$@" >/dev/null
        end=$(date +%s%N)
        echo $(((end - start) / 1000))
    done | sort -n | awk '{ v[NR] = $1 } END { printf "%.6f", v[int((NR + 1) / 2)] / 1e6 }'
}

language_rows() {
    local language="$1" server="$2" file="$3" config="$4" broken="$5" fixed="$6"
    local dir="$BENCH_TMP/lsp-$language" off="$BENCH_TMP/lsp-$language-off"
    mkdir -p "$dir" "$off/.tinytool"
    echo "$config" >"$dir/${config_name[$language]}"
    cp "$dir/${config_name[$language]}" "$off/"
    echo '{"lsp": {"enabled": false}}' >"$off/.tinytool/config.json"
    printf '%s\n' "$fixed" >"$dir/$file"
    printf '%s\n' "$fixed" >"$off/$file"
    # The broker and server start here; every row below finds them warm.
    "$TT" --dir "$dir" write --file-path "$file" --content "$broken" >/dev/null
    local content="${broken//NAME/missing_\$RANDOM}"
    # shellcheck disable=SC2016 # $RANDOM is expanded by the benchmark's shell, per run
    BENCH_PAIRS=30 cost_row "lsp: $language write, warm $server, cost of diagnostics" \
        "$TT --dir $dir write --file-path $file --content \"$content\"" \
        "lsp.enabled false" "$TT --dir $off write --file-path $file --content \"$content\""
    local ours peer report
    ours=$(median_ms 20 bash -c "\"$TT\" --dir \"$dir\" write --file-path $file --content \"$content\"")
    report=$(python3 "$direct" --server "$language" --dir "$dir" --file "$file" \
        --broken "${broken//NAME/missing_x}" --fixed "$fixed" --warm 20)
    peer=$(json_get "$report" 'v["warm_ms"] / 1000')
    given_row time "lsp: $language warm edit → diagnostics ($server)" "$ours" \
        "$server direct" "$peer"
    local push
    push=$(python3 "$direct" --server "$language" --dir "$dir" --file "$file" --method push \
        --broken "${broken//NAME/missing_x}" --fixed "$fixed" --warm 10)
    bench_note "lsp: $server's own publish after a change (push, what a client that only listens waits for): $(json_get "$push" 'v["warm_ms"]') ms"
    local memory
    memory=$(json_get "$("$TT" --dir "$dir" lsp status --json)" \
        "sum(r['memory_kib'] for l in v['languages'] for r in l['running'])")
    given_row mem "lsp: $language server memory (RSS, warm)" "$memory" \
        "$server direct (peak)" "$(json_get "$report" 'v["peak_kib"]')"
    # Cold: the first write after a stop starts the server.
    local cold=()
    for ((i = 0; i < 3; i++)); do
        "$TT" --dir "$dir" lsp stop >/dev/null
        cold+=("$(median_ms 1 "$TT" --dir "$dir" write --file-path "$file" --content "${broken//NAME/missing_$i}")")
    done
    ours=$(printf '%s\n' "${cold[@]}" | sort -n | sed -n 2p)
    local direct_cold=()
    for ((i = 0; i < 3; i++)); do
        direct_cold+=("$(python3 "$direct" --server "$language" --dir "$dir" --file "$file" \
            --broken "${broken//NAME/missing_$i}" --fixed "$fixed")")
        direct_cold[i]=$(json_get "${direct_cold[i]}" 'v["cold_ms"] / 1000')
    done
    peer=$(printf '%s\n' "${direct_cold[@]}" | sort -n | sed -n 2p)
    given_row time "lsp: $language first diagnostics, cold ($server)" "$ours" \
        "$server direct" "$peer"
    "$TT" --dir "$dir" lsp stop >/dev/null
}

declare -A config_name=([pyright]=pyrightconfig.json [typescript]=tsconfig.json)
language_rows pyright pyright-langserver a.py '{}' 'print(NAME)' 'print(1)'
language_rows typescript typescript-language-server a.ts '{"compilerOptions": {"strict": true}}' \
    'export const value: number = NAME;' 'export const value: number = 1;'
bench_note "lsp: warm rows are one CLI process per write (the broker keeps the server warm between them); the direct figure is the server asked the same way (pyright: pull, typescript-language-server: tsserver's synchronous diagnostics) from didChange to its answer"
