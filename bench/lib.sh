# shellcheck shell=bash
# bench/lib.sh — the benchmark harness every bench/NN-<area>.sh script sources.
#
# `make bench` runs bench/run, which sets up once, runs every bench/[0-9][0-9]-*.sh in name
# order and prints ONE table of all rows. A script can also run alone
# (`bench/01-foundation.sh`): it then sets up itself and prints its own rows at exit.
#
# A script:
#     #!/usr/bin/env bash
#     source "$(dirname "$0")/lib.sh"
#     file=$(bench_cached words.txt 'seq 1 100000')
#     bench_row "read, 100k lines" "$TT read --file-path $file" "cat" "cat $file"
#     mem_row   "read, 100k lines" "$TT read --file-path $file" "cat" "cat $file"
#
# What lib.sh provides:
#   TT            absolute path of the release binary (built by the setup, `cargo build --release`)
#   BENCH_CACHE   where generated inputs live between runs, outside the repository:
#                 ${TINYTOOL_BENCH_CACHE:-$HOME/.cache/tinytool-bench}
#   BENCH_TMP     a scratch directory for this run (removed at the end); scripts run in it
#   XDG_CONFIG_HOME  an empty directory of BENCH_TMP, so the user's tinytool config and
#                 policy do not change the figures. The default policy refuses paths outside
#                 --dir: give tinytool `--dir "$BENCH_CACHE"` (or a folder in it) and
#                 relative paths.
#   bench_cached NAME 'GENERATOR'
#                 prints $BENCH_CACHE/NAME, first creating it from the standard output of
#                 the shell command GENERATOR when it is missing (written to a temporary
#                 name and renamed, so an interrupted generation is never reused)
#   bench_row NAME 'TINYTOOL CMD' 'PEER LABEL' 'PEER CMD'
#                 one hyperfine run measuring both commands; records the median wall time
#                 of each and the ratio tinytool/peer (below 1 means tinytool is faster).
#                 A failing command marks the row `failed`; the other rows still run and
#                 `make bench` exits 1.
#                 Commands are shell text; without shell syntax (| < > ; & $ ...; quotes are
#                 fine) they run without a shell (hyperfine -N), else under bash with hyperfine's
#                 correction for the shell's start. Output is discarded, a non-zero exit
#                 fails the row. Output goes through a pipe (some programs skip work when
#                 writing to /dev/null). Tuning, as variables set for one call:
#                 BENCH_RUNS=N (default: hyperfine's, at least 10 runs and 3 s),
#                 BENCH_WARMUP=N (default 3).
#   mem_row NAME 'TINYTOOL CMD' 'PEER LABEL' 'PEER CMD'
#                 peak resident memory (GNU time's maximum RSS) of each command, the median
#                 of BENCH_MEM_RUNS (default 5) runs, and the ratio tinytool/peer. A command
#                 of plain words (quotes allowed) runs without a shell; one with a
#                 redirection runs as `sh -c "exec CMD"` (the figure includes the shell's
#                 ~1.6 MiB before the exec); with a pipe or `;`, the largest process counts.
#   cost_row NAME 'WITH CMD' 'WITHOUT LABEL' 'WITHOUT CMD'
#                 the cost per call of a layer (sandbox, checkpoints): BENCH_PAIRS (default
#                 40) interleaved pairs of one run of each command, the order flipped every
#                 pair, after BENCH_WARMUP runs of each (bench/pairs.py). Records the two
#                 medians as a row and, as a note, the median of the pairs' differences
#                 (the figure the issues' "per call" targets mean).
#   given_row time|mem NAME OURS 'PEER LABEL' PEER
#                 a row of figures measured by the script itself (seconds for time, KiB
#                 for mem), for peers hyperfine cannot run once per sample (a language
#                 server driven directly, warm, by bench/lsp-direct.py).
#   bench_note TEXT
#                 a line printed under the table (what a row means, a threshold).
#
# Setup (once per `make bench`): installs Debian's hyperfine, ripgrep, fd-find (binary
# `fdfind`) and GNU time with apt-get when missing (sudo when not root), builds the release
# binary, creates BENCH_CACHE. .ci/run never runs any of this.

set -euo pipefail

BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export BENCH_ROOT

# Installs the Debian packages the harness and the rows need, when missing.
bench_install() {
    local missing=()
    command -v hyperfine >/dev/null 2>&1 || missing+=(hyperfine)
    command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
    command -v fdfind >/dev/null 2>&1 || missing+=(fd-find)
    [ -x /usr/bin/time ] || missing+=(time)
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "bench: installing ${missing[*]}" >&2
    $sudo apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
        $sudo apt-get update -qq >/dev/null &&
            $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    }
}

bench_setup() {
    bench_install
    echo "bench: building the release binary" >&2
    (cd "$BENCH_ROOT" && cargo build --release --locked --quiet)
    TT="${CARGO_TARGET_DIR:-$BENCH_ROOT/target}/release/tinytool"
    case "$TT" in /*) ;; *) TT="$BENCH_ROOT/$TT" ;; esac
    BENCH_CACHE="${TINYTOOL_BENCH_CACHE:-$HOME/.cache/tinytool-bench}"
    mkdir -p "$BENCH_CACHE"
    BENCH_TMP="$(mktemp -d "${TMPDIR:-/tmp}/tinytool-bench.XXXXXX")"
    BENCH_RESULTS="$BENCH_TMP/results.tsv"
    : >"$BENCH_RESULTS"
    # The user's own config and policy must not change the figures.
    XDG_CONFIG_HOME="$BENCH_TMP/config"
    mkdir -p "$XDG_CONFIG_HOME"
    export TT BENCH_CACHE BENCH_TMP BENCH_RESULTS XDG_CONFIG_HOME
}

bench_cached() {
    local name="$1" generator="$2"
    local path="$BENCH_CACHE/$name"
    if [ ! -f "$path" ]; then
        echo "bench: generating $path" >&2
        bash -c "$generator" >"$path.partial"
        mv "$path.partial" "$path"
    fi
    printf '%s\n' "$path"
}

# Records a row whose commands failed; the other rows still run, the exit status says so.
_bench_failed() {
    printf '%s\t%s\tfailed\t%s\t-\t-\n' "$1" "$2" "$3" >>"$BENCH_RESULTS"
    echo "$2" >>"$BENCH_TMP/failed"
}

bench_note() {
    printf 'note\t%s\n' "$1" >>"$BENCH_RESULTS"
}

# Whether a command needs a shell to run.
_bench_needs_shell() {
    case "$1" in
        *[\|\<\>\;\&\$\`\*\?\(\)\{\}\~]*) return 0 ;;
        *) return 1 ;;
    esac
}

bench_row() {
    local name="$1" ours="$2" label="$3" peer="$4"
    local json="$BENCH_TMP/row.json"
    local opts=(--style none --warmup "${BENCH_WARMUP:-3}" --export-json "$json" --output pipe)
    [ -n "${BENCH_RUNS:-}" ] && opts+=(--runs "$BENCH_RUNS")
    if _bench_needs_shell "$ours" || _bench_needs_shell "$peer"; then
        opts+=(--shell bash)
    else
        opts+=(-N)
    fi
    echo "bench: $name" >&2
    if ! hyperfine "${opts[@]}" "$ours" "$peer" >/dev/null; then
        _bench_failed time "$name" "$label"
        return 0
    fi
    local medians
    medians=$(grep -o '"median": *[0-9.eE+-]*' "$json" | sed 's/.*: *//' | tr '\n' ' ')
    # shellcheck disable=SC2086
    set -- $medians
    printf 'time\t%s\t%s\t%s\t%s\t%s\n' "$name" "$1" "$label" "$2" \
        "$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
        >>"$BENCH_RESULTS"
}

cost_row() {
    local name="$1" with="$2" label="$3" without="$4" figures
    echo "bench: $name (interleaved pairs)" >&2
    if ! figures=$(python3 "$BENCH_ROOT/bench/pairs.py" "${BENCH_PAIRS:-40}" \
        "${BENCH_WARMUP:-3}" "$with" "$without"); then
        _bench_failed time "$name" "$label"
        return 0
    fi
    # shellcheck disable=SC2086
    set -- $figures
    printf 'time\t%s\t%s\t%s\t%s\t%s\n' "$name" "$1" "$label" "$2" \
        "$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
        >>"$BENCH_RESULTS"
    bench_note "$name: $(awk -v d="$3" 'BEGIN { printf "%+.2f ms", d * 1e3 }') per call (median of ${BENCH_PAIRS:-40} interleaved pairs)"
}

given_row() {
    local kind="$1" name="$2" ours="$3" label="$4" peer="$5"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$name" "$ours" "$label" "$peer" \
        "$(awk -v a="$ours" -v b="$peer" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
        >>"$BENCH_RESULTS"
}

# Median peak RSS in KiB of one command over BENCH_MEM_RUNS runs.
_bench_peak_kib() {
    local cmd="$1" runs="${BENCH_MEM_RUNS:-5}" i
    local -a run
    case "$cmd" in
        *[\|\;\&]*) run=(sh -c "$cmd") ;;
        *[\<\>]*) run=(sh -c "exec $cmd") ;;
        # Plain words (quotes allowed): measured without any shell.
        *) eval "run=($cmd)" ;;
    esac
    for ((i = 0; i < runs; i++)); do
        /usr/bin/time -f '%M' -o "$BENCH_TMP/rss" "${run[@]}" >/dev/null || return 1
        tail -n 1 "$BENCH_TMP/rss"
    done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

mem_row() {
    local name="$1" ours="$2" label="$3" peer="$4" a b
    echo "bench: $name (memory)" >&2
    if ! a=$(_bench_peak_kib "$ours") || ! b=$(_bench_peak_kib "$peer"); then
        _bench_failed mem "$name" "$label"
        return 0
    fi
    printf 'mem\t%s\t%s\t%s\t%s\t%s\n' "$name" "$a" "$label" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
        >>"$BENCH_RESULTS"
}

# Prints the rows recorded so far as one table.
bench_table() {
    awk -F '\t' '
        function human(kind, v) {
            if (v == "failed" || v == "-") return v
            if (kind == "mem") return sprintf("%.1f MiB", v / 1024)
            if (v < 0.001) return sprintf("%.1f us", v * 1e6)
            if (v < 1) return sprintf("%.2f ms", v * 1e3)
            return sprintf("%.2f s", v)
        }
        $1 == "note" { notes[++n] = $2; next }
        {
            rows++
            name[rows] = $2 (($1 == "mem") ? " [peak RSS]" : "")
            ours[rows] = human($1, $3); label[rows] = $4
            peer[rows] = human($1, $5); ratio[rows] = $6
            if (length(name[rows]) > w1) w1 = length(name[rows])
            if (length(label[rows]) > w3) w3 = length(label[rows])
        }
        END {
            if (w1 < 5) w1 = 5; if (w3 < 4) w3 = 4
            fmt = "%-" w1 "s  %12s  %-" w3 "s  %12s  %7s\n"
            printf fmt, "bench", "tinytool", "peer", "peer", "ratio"
            line = ""; for (i = 0; i < w1 + w3 + 45; i++) line = line "-"; print line
            for (i = 1; i <= rows; i++) printf fmt, name[i], ours[i], label[i], peer[i], ratio[i]
            if (rows) print "ratio = tinytool / peer (time: medians; memory: median peak RSS)"
            for (i = 1; i <= n; i++) print "note: " notes[i]
        }' "$BENCH_RESULTS"
}

# Set up unless bench/run already did; a script run alone prints its table at exit.
if [ -z "${BENCH_RESULTS:-}" ]; then
    bench_setup
    _bench_finish() {
        local status=$?
        [ -s "$BENCH_TMP/failed" ] && status=1
        bench_table
        rm -rf "$BENCH_TMP"
        exit "$status"
    }
    trap _bench_finish EXIT
fi
cd "$BENCH_TMP"
