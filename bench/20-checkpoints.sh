#!/usr/bin/env bash
# Checkpoint rows, on a copy of the generated 20,000-file search tree (the copy
# is ours to change; its .tinytool/ holds the checkpoints):
# - a bash call that changes nothing (`sh -c true`: not read-only to the classifier, so it
#   is checkpointed) with checkpoints against the same call with `checkpoints.enabled`
#   false, as interleaved pairs: the median difference is the cost of the two stat walks
#   (acceptance: at most 50 ms);
# - a bash call that rewrites 10 files with new content, the same way;
# - a write call (its checkpoint covers the one file it names: no walk), the same way;
# - sandbox and checkpoints together against neither;
# - the first checkpoint of the tree (the baseline: every file stored) against
#   `git add -A` into a fresh repository (what opencode does); both start from nothing
#   each run (acceptance: not slower than git).
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

allow="$BENCH_CACHE/checkpoints-allow.json"
bare="$BENCH_CACHE/checkpoints-bare.json"
echo '{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}' >"$allow"
echo '{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}], "sandbox": {"mode": "off"}}' >"$bare"
# The config folders: checkpoints on (the default) and off.
on_cfg="$BENCH_TMP/cp-on"
off_cfg="$BENCH_TMP/cp-off"
mkdir -p "$on_cfg/tinytool" "$off_cfg/tinytool"
echo '{}' >"$on_cfg/tinytool/config.json"
echo '{"checkpoints": {"enabled": false}}' >"$off_cfg/tinytool/config.json"

source_tree="$BENCH_CACHE/search-tree-20000-v1"
if [ ! -d "$source_tree" ]; then
    rm -rf "$source_tree.partial"
    python3 "$BENCH_ROOT/bench/gen-search-tree.py" "$source_tree.partial" 20000 200000000
    mv "$source_tree.partial" "$source_tree"
fi
tree="$BENCH_CACHE/checkpoint-tree-20000-v1"
if [ ! -d "$tree" ]; then
    rm -rf "$tree.partial"
    cp -a "$source_tree" "$tree.partial"
    mkdir -p "$tree.partial/scratch"
    mv "$tree.partial" "$tree"
fi

on="env XDG_CONFIG_HOME=$on_cfg $TT --dir $tree"
off="env XDG_CONFIG_HOME=$off_cfg $TT --dir $tree"

# Each run of the first row starts from no .tinytool/ at all (its rm is timed, as the
# git row's rm of its repository is); the last run leaves the baseline the next rows use.
git_dir="$BENCH_TMP/cp-git"
BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "first checkpoint (baseline), 20k tree" \
    "rm -rf $tree/.tinytool && $on --policy $bare bash --command 'sh -c true'" \
    "git add -A, fresh repo" \
    "rm -rf $git_dir && git --git-dir=$git_dir --work-tree=$tree init -q && git --git-dir=$git_dir --work-tree=$tree add -A"

BENCH_PAIRS=20 cost_row "bash no change, 20k tree, checkpoints" "$on --policy $bare bash --command 'sh -c true'" \
    "checkpoints off" "$off --policy $bare bash --command 'sh -c true'"
ten='for i in 0 1 2 3 4 5 6 7 8 9; do echo $RANDOM$RANDOM > scratch/f$i.txt; done'
BENCH_PAIRS=20 cost_row "bash 10 files changed, 20k tree, checkpoints" "$on --policy $bare bash --command '$ten'" \
    "checkpoints off" "$off --policy $bare bash --command '$ten'"
BENCH_PAIRS=20 cost_row "write one file, 20k tree, checkpoints" \
    "$on --policy $bare write --file-path scratch/w.txt --content \$RANDOM" \
    "checkpoints off" "$off --policy $bare write --file-path scratch/w.txt --content \$RANDOM"
BENCH_PAIRS=20 cost_row "bash no change, 20k tree, sandbox+checkpoints" "$on --policy $allow bash --command 'sh -c true'" \
    "neither" "$off --policy $bare bash --command 'sh -c true'"

bench_note "budget: a no-change bash call's checkpoint costs at most 50 ms on the 20,000-file tree; the first checkpoint is not slower than git add -A"
