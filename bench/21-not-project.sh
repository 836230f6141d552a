#!/usr/bin/env bash
# Rows for a project with an un-ignored Python virtual environment (as a project that
# relies on the developer's global gitignore has): 300 source files, and a `venv/` with a
# `pyvenv.cfg` and 2,500 installed files (about 50 MB) that no .gitignore lists.
# - the first checkpoint (the baseline) against `git add -A` into a fresh repository: the
#   checkpoint leaves the virtualenv out (it stores the 300 files), git stores it all;
# - glob `**/*.py` against `fd -e py` and grep of a rare word against `rg -n`: tinytool
#   leaves the virtualenv out and says so, the peers (no ignore file names it) search it.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

policy="$BENCH_CACHE/not-project-allow.json"
echo '{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}], "sandbox": {"mode": "off"}}' >"$policy"

tree="$BENCH_CACHE/venv-project-v1"
if [ ! -d "$tree" ]; then
    rm -rf "$tree.partial"
    python3 - "$tree.partial" <<'PY'
import os, random, sys
root = sys.argv[1]
random.seed(7)
def write(rel, size):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    words = ["def", "return", "self", "value", "import", "class", "None", "for", "in"]
    text = []
    while sum(len(t) for t in text) < size:
        text.append(" ".join(random.choice(words) for _ in range(8)) + "\n")
    with open(path, "w") as f:
        f.write("".join(text))
for i in range(300):
    write(f"src/pkg{i % 12}/mod{i}.py", 3000)
write("src/pkg0/rare.py", 500)
with open(os.path.join(root, "src/pkg0/rare.py"), "a") as f:
    f.write("zanzibar_marker = 1\n")
with open(os.path.join(root, ".gitignore"), "w") as f:
    f.write("*.pyc\n")
os.makedirs(os.path.join(root, "venv"), exist_ok=True)
with open(os.path.join(root, "venv/pyvenv.cfg"), "w") as f:
    f.write("home = /usr/bin\nversion = 3.11.2\n")
for i in range(2500):
    write(f"venv/lib/python3.11/site-packages/dep{i % 60}/m{i}.py", 20000)
PY
    mv "$tree.partial" "$tree"
fi

git_dir="$BENCH_TMP/venv-git"
BENCH_RUNS=5 BENCH_WARMUP=1 bench_row "first checkpoint, project with un-ignored venv" \
    "rm -rf $tree/.tinytool && $TT --dir $tree --policy $policy bash --command 'sh -c true'" \
    "git add -A, fresh repo" \
    "rm -rf $git_dir && git --git-dir=$git_dir --work-tree=$tree init -q && git --git-dir=$git_dir --work-tree=$tree add -A"
bench_row "glob **/*.py, project with un-ignored venv" \
    "$TT --dir $tree --policy $policy glob --pattern '**/*.py'" \
    "fdfind -e py" "fdfind -e py . $tree"
bench_row "grep rare word, project with un-ignored venv" \
    "$TT --dir $tree --policy $policy grep --pattern zanzibar_marker" \
    "rg -n" "rg -n zanzibar_marker $tree"
bench_note "venv rows: tinytool leaves the virtualenv out (it holds pyvenv.cfg) and says so; git, fd and rg, with no ignore file naming it, read all of it"
