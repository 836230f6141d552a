#!/usr/bin/env bash
# Sandbox rows: one bash call (`true`) with the sandbox (mode auto: mount, PID
# namespace, masking; a user namespace when not root) against the same call with
# `"sandbox": {"mode": "off"}`, in a small git project and in the generated 20,000-file
# search tree (the secret scan is cached by directory mtimes, so it must not make the
# call slow), and in a repository whose tracked secret leaves the index read on every call,
# as interleaved pairs (the median of their differences is the sandbox's cost
# per call; acceptance: at most 5 ms), and a build of a small crate.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

on="$BENCH_CACHE/sandbox-on.json"
off="$BENCH_CACHE/sandbox-off.json"
echo '{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}' >"$on"
echo '{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}], "sandbox": {"mode": "off"}}' >"$off"

small="$BENCH_CACHE/sandbox-small-v1"
if [ ! -d "$small/.git" ]; then
    mkdir -p "$small/src"
    git -C "$small" init -q
    echo 'KEY=x' >"$small/.env"
    for i in $(seq 1 50); do echo "fn f$i() {}" >"$small/src/f$i.rs"; done
fi
tree="$BENCH_CACHE/search-tree-20000-v1"
if [ ! -d "$tree" ]; then
    rm -rf "$tree.partial"
    python3 "$BENCH_ROOT/bench/gen-search-tree.py" "$tree.partial" 20000 200000000
    mv "$tree.partial" "$tree"
fi

# A repository with a tracked secret among 5,000 tracked files and an untracked one: the
# masking reads git's index every call to leave the tracked one unmasked.
tracked="$BENCH_CACHE/sandbox-tracked-v1"
if [ ! -d "$tracked/.git" ]; then
    rm -rf "$tracked.partial"
    mkdir -p "$tracked.partial"
    (
        cd "$tracked.partial"
        git init -q
        for d in $(seq 1 50); do
            mkdir -p "pkg$d"
            for f in $(seq 1 100); do echo "x$f" >"pkg$d/mod$f.py"; done
        done
        echo 'KEY=tracked' >config.env
        git add -A
        git -c user.name=b -c user.email=b@b commit -qm bench
        echo 'KEY=local' >.env.local
    )
    mv "$tracked.partial" "$tracked"
fi

for dir in "$small" "$tracked" "$tree"; do
    label="bash true, $(basename "$dir")"
    BENCH_PAIRS=100 cost_row "$label, sandbox" "$TT --policy $on --dir $dir bash --command true" \
        "no sandbox" "$TT --policy $off --dir $dir bash --command true"
done

# A build of a small crate (no dependencies; each run rebuilds it): the sandbox around a
# real toolchain, which reads the whole machine and writes only the project's target/.
crate="$BENCH_CACHE/sandbox-crate-v1"
if [ ! -f "$crate/Cargo.toml" ]; then
    rm -rf "$crate"
    cargo new -q --vcs none --name sandbox_bench "$crate"
fi
build="touch src/main.rs && cargo build --offline -q"
bench_row "cargo build, small crate, sandbox" "$TT --policy $on --dir $crate bash --command '$build'" \
    "no sandbox" "$TT --policy $off --dir $crate bash --command '$build'"

bench_note "budget: the sandbox costs at most 5 ms per bash call in both trees"
