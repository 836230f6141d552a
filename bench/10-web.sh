#!/usr/bin/env bash
# Web rows: webfetch of a 1 MB documentation page from a loopback server with
# HTML-to-Markdown conversion, against `curl -s` of the same page (transfer only), time and
# peak memory; and the same fetch as raw HTML, to separate transfer from conversion. The server is python3's http.server, started here; the page's host is opened
# with webfetch.allow_hosts in a private user config and webfetch is allowed by a policy
# file, as a user would do it. Peak memory of text and Markdown on a 6 MB page of paragraphs.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

page=$(bench_cached web-page-1mb.html "python3 $BENCH_ROOT/bench/gen-web-page.py")
site="$BENCH_TMP/web-site"
mkdir -p "$site"
cp "$page" "$site/page.html"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >/dev/null 2>&1 &
server=$!
_web_stop() {
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
}
if declare -F _bench_finish >/dev/null; then
    # Run alone: lib.sh's exit trap prints the table; keep it, after stopping the server.
    trap 'status=$?; _web_stop; (exit $status); _bench_finish' EXIT
else
    trap _web_stop EXIT
fi
url="http://127.0.0.1:$port/page.html"
for _ in $(seq 1 50); do
    curl -sf -o /dev/null "$url" && break
    sleep 0.1
done

# This script's own config home: the run's shared one stays empty for the other scripts.
export XDG_CONFIG_HOME="$BENCH_TMP/web-config"
mkdir -p "$XDG_CONFIG_HOME/tinytool"
printf '{"webfetch": {"allow_hosts": ["127.0.0.1:%s"]}}\n' "$port" \
    >"$XDG_CONFIG_HOME/tinytool/config.json"
policy="$BENCH_TMP/web-policy.json"
printf '%s\n' '{"rules": [{"permission": "webfetch", "pattern": "*", "action": "allow"}]}' >"$policy"

fetch="$TT --policy $policy webfetch --url $url --format markdown"
# A row of refusals or errors would measure nothing: the fetch must convert the page.
if ! "$TT" --policy "$policy" --text webfetch --url "$url" --format markdown | grep -q '^# Benchmark documentation page'; then
    bench_note "webfetch: the 1 MB page did not fetch and convert; rows below are void"
fi
bench_row "webfetch 1 MB page as Markdown" "$fetch" "curl -s" "curl -s $url"
# The same transfer without conversion: what the HTTP stack and the guard cost.
bench_row "webfetch 1 MB page, raw HTML" \
    "$TT --policy $policy webfetch --url $url --format html" "curl -s" "curl -s $url"
mem_row "webfetch 1 MB page as Markdown" "$fetch" "curl -s" "curl -s $url"

# Memory on a page past the 5 MB body cap: 200,000 paragraphs in windows-1252. The text
# conversion renders a group of blocks at a time, so its peak follows the parsed page.
paragraphs=$(bench_cached web-paragraphs-6mb.html "python3 $BENCH_ROOT/bench/gen-web-paragraphs.py")
cp "$paragraphs" "$site/paragraphs.html"
big="http://127.0.0.1:$port/paragraphs.html"
if ! "$TT" --policy "$policy" --text webfetch --url "$big" --format text | grep -q '^Paragraph memory page'; then
    bench_note "webfetch: the 6 MB page did not fetch and convert; its rows are void"
fi
mem_row "webfetch 6 MB page as text" "$TT --policy $policy webfetch --url $big --format text" \
    "curl -s" "curl -s $big"
mem_row "webfetch 6 MB page as Markdown" \
    "$TT --policy $policy webfetch --url $big --format markdown" "curl -s" "curl -s $big"

bench_note "webfetch rows: tinytool fetches and converts HTML to Markdown; curl only transfers"
