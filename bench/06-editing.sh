#!/usr/bin/env bash
# Editing rows: an exact and a fuzzy edit in a 20,000-line file, and a 50-file
# patch. Every run starts from a fresh copy of the input, flushed with `sync` (both sides
# pay the same copy and flush), so the edit is the same each time and tinytool's fsync of
# its own writes does not also pay for flushing the copy. The peers do not fsync.
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# 5,000 three-line Python functions: 20,000 lines, 0.6 MB.
big=$(bench_cached edit-20k.py \
    'awk "BEGIN { for (i = 0; i < 5000; i++) printf \"def handler_%d(request):\\n    value = request.get(\\\"k%d\\\")\\n    return value * %d\\n\\n\", i, i, i + 1 }"')
mkdir -p e1 e2 f1 f2

# Exact: one unique line in the middle of the file.
ours="cp $big e1/work.py && sync && $TT --dir e1 edit --file-path work.py --old-string 'value = request.get(\"k2500\")' --new-string 'value = request.get(\"k2500\", 1)'"
peer="cp $big e2/work.py && sync && sed -i 's/request.get(\"k2500\")/request.get(\"k2500\", 1)/' e2/work.py"
bench_row "edit: exact, 20,000-line file" "$ours" "sed -i" "$peer"
mem_row "edit: exact, 20,000-line file" "$ours" "sed -i" "$peer"

# The fuzzy rows run on 4,000 five-line functions (20,000 lines), each with a comment: a
# wrong line is tolerated only inside a comment (a line that differs in code is refused as
# stale), so the one wrong line of these edits is a comment's.
commented=$(bench_cached edit-20k-commented.py \
    'awk "BEGIN { for (i = 0; i < 4000; i++) printf \"def handler_%d(request):\\n    # look up k%d\\n    value = request.get(\\\"k%d\\\")\\n    return value * %d\\n\\n\", i, i, i, i + 1 }"')

# Fuzzy: old_string indented with two spaces instead of four and one interior line wrong
# (the comment says `key3000` for `k3000`), so the cascade runs down to the fuzzy stage.
# The block runs on to the next function's first line: the fuzzy gate wants an equal
# interior line besides the anchors. The peer is GNU patch ignoring whitespace on a diff
# with the same shifted indentation.
printf '%s\n' '{"file_path": "work.py", "old_string": "def handler_3000(request):\n  # look up key3000\n  value = request.get(\"k3000\")\n  return value * 3001\n\ndef handler_3001(request):", "new_string": "def handler_3000(request):\n  # look up key3000\n  value = request.get(\"k3000\")\n  return value * 3001 + 1\n\ndef handler_3001(request):"}' >fuzzy.json
# (patch wants as much context after the change as before it, or takes the hunk for the
# end of the file.)
printf '%s\n' '--- work.py' '+++ work.py' '@@ -15001,6 +15001,6 @@' ' def handler_3000(request):' \
    '   # look up k3000' '   value = request.get("k3000")' '-  return value * 3001' \
    '+    return value * 3001 + 1' ' ' ' def handler_3001(request):' >fuzzy.diff
# Both sides must make the edit, or the figures mean nothing.
cp "$commented" f1/work.py && "$TT" --dir f1 edit <fuzzy.json >/dev/null &&
    grep -q 'return value \* 3001 + 1' f1/work.py ||
    bench_note "edit fuzzy: tinytool did not make the edit"
cp "$commented" f2/work.py && patch -s -l -p0 -d f2 <fuzzy.diff &&
    grep -q 'return value \* 3001 + 1' f2/work.py ||
    bench_note "edit fuzzy: patch -l did not make the edit"
bench_row "edit: fuzzy (indentation, one line), 20,000 lines" \
    "cp $commented f1/work.py && sync && $TT --dir f1 edit < fuzzy.json" \
    "patch -l" "cp $commented f2/work.py && sync && patch -s -l -p0 -d f2 < fuzzy.diff"

# Fuzzy through every stage and variant: old_string escaped as a string literal's
# source (`\"`), shifted and with one interior comment line wrong, so each strategy runs on
# the escaped and unescaped variants before the fuzzy stage accepts. Target: under 0.1 s.
printf '%s\n' '{"file_path": "work.py", "old_string": "def handler_2000(request):\n  # look up key2000\n  value = request.get(\\\"k2000\\\")\n  return value * 2001\n\ndef handler_2001(request):\n  # look up k2001", "new_string": "def handler_2000(request):\n  # look up key2000\n  value = request.get(\\\"k2000\\\")\n  return value * 2001 + 1\n\ndef handler_2001(request):\n  # look up k2001"}' >escaped.json
cp "$commented" f1/work.py && "$TT" --dir f1 edit <escaped.json >/dev/null &&
    grep -q 'return value \* 2001 + 1' f1/work.py ||
    bench_note "edit fuzzy, escaped: tinytool did not make the edit"
bench_row "edit: fuzzy, escaped + shifted + one line, 20,000 lines" \
    "cp $commented f1/work.py && sync && $TT --dir f1 edit < escaped.json" \
    "patch -l" "cp $commented f2/work.py && sync && patch -s -l -p0 -d f2 < fuzzy.diff"

# 50 files of 200 lines, two hunks each, as one git-style diff.
mkdir -p tree50
for n in $(seq -w 1 50); do
    awk -v n="$n" 'BEGIN { for (i = 1; i <= 200; i++) printf "file %s line %03d: some text\n", n, i }' >"tree50/f$n.txt"
done
for n in $(seq -w 1 50); do
    printf 'diff --git a/f%s.txt b/f%s.txt\n--- a/f%s.txt\n+++ b/f%s.txt\n' "$n" "$n" "$n" "$n"
    printf '@@ -49,3 +49,3 @@\n file %s line 049: some text\n-file %s line 050: some text\n+file %s line 050: changed\n file %s line 051: some text\n' "$n" "$n" "$n" "$n"
    printf '@@ -149,3 +149,4 @@\n file %s line 149: some text\n file %s line 150: some text\n+file %s line 150.5: added\n file %s line 151: some text\n' "$n" "$n" "$n" "$n"
done >patch50.diff
bench_row "apply_patch: 50 files, 100 hunks" \
    "rm -rf p1 && cp -r tree50 p1 && sync && $TT --dir p1 apply_patch --patch \"\$(cat patch50.diff)\"" \
    "patch -p1" "rm -rf p2 && cp -r tree50 p2 && sync && patch -s -p1 -d p2 < patch50.diff"

bench_note "editing rows: cp + sync before each run on both sides; tinytool fsyncs every write (atomic, durable), sed/patch do not"

# The record every staged temporary file gets before it exists (the next call
# removes what a killed write left): a small write with records against the same write
# where the user's state directory cannot be made (no record is kept).
mkdir -p w1 st
BENCH_PAIRS=60 cost_row "write, small file, temp-file record" \
    "env XDG_STATE_HOME=$PWD/st $TT --dir w1 write --file-path a.txt --content x" \
    "no record" "env XDG_STATE_HOME=/proc/none $TT --dir w1 write --file-path a.txt --content x"
