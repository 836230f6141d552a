#!/usr/bin/env bash
# Cost against the length of the history: two copies of one small project (200 files),
# one with 10 checkpoints and one with 10,000 (seeded into its state database, each
# changing one of 500 files of an old folder), compared row by row. Equal costs (a ratio
# near 1) are the aim: listing shows one page, recording and undo look only at the paths
# they change, and pruning keeps a running count of the store's size.
# - `tinytool checkpoints` (the newest page);
# - a write call (its checkpoint recorded, the store pruned by its policy);
# - a write followed by the undo of its checkpoint;
# - a bash call that changes nothing (the walk; no history is read).
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

policy="$BENCH_CACHE/history-allow.json"
echo '{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}], "sandbox": {"mode": "off"}}' >"$policy"

# A project whose state holds `$2` checkpoints.
seed_history() {
    local dir="$1" count="$2"
    rm -rf "$dir"
    mkdir -p "$dir"
    python3 - "$dir" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(200):
    path = os.path.join(root, f"src/m{i % 10}/f{i}.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"line {i}\n" * 20)
PY
    # One real call makes the database, the baseline and a blob to refer to.
    "$TT" --dir "$dir" --policy "$policy" write --file-path src/m0/f0.txt --content seeded >/dev/null
    python3 - "$dir/.tinytool/state.db" "$count" <<'PY'
import sqlite3, sys, time
db, count = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
blob = con.execute("SELECT blob FROM checkpoint_files WHERE blob IS NOT NULL LIMIT 1").fetchone()[0]
now = int(time.time() * 1000)
for i in range(count - 1):
    cur = con.execute(
        "INSERT INTO checkpoints (kind, session_id, call_id, tool, command, time_created, status,"
        " pid, reverts, undone_by, overlaps, scope) VALUES ('call', 'seed', NULL, 'write', ?,"
        " ?, 'done', 1, NULL, NULL, '', 'files')",
        (f"old/f{i % 500}.txt", now - (count - i)),
    )
    con.execute(
        "INSERT INTO checkpoint_changes (checkpoint_id, path, before_mode, before_blob,"
        " after_mode, after_blob, note) VALUES (?, ?, NULL, NULL, 33188, ?, NULL)",
        (cur.lastrowid, f"old/f{i % 500}.txt#{i}", blob),
    )
con.commit()
PY
}

short="$BENCH_TMP/history-10"
long="$BENCH_TMP/history-10000"
seed_history "$short" 10
seed_history "$long" 10000

at() { echo "$TT --dir $1 --policy $policy"; }
bench_row "checkpoints list, 10,000 checkpoints vs 10" \
    "$(at "$long") checkpoints" \
    "same, 10 checkpoints" "$(at "$short") checkpoints"
bench_row "write (checkpoint recorded), 10,000 checkpoints vs 10" \
    "$(at "$long") write --file-path src/m1/f1.txt --content \$RANDOM" \
    "same, 10 checkpoints" "$(at "$short") write --file-path src/m1/f1.txt --content \$RANDOM"
bench_row "write then undo it, 10,000 checkpoints vs 10" \
    "$(at "$long") write --file-path src/m2/f2.txt --content \$RANDOM && $(at "$long") undo" \
    "same, 10 checkpoints" \
    "$(at "$short") write --file-path src/m2/f2.txt --content \$RANDOM && $(at "$short") undo"
bench_row "bash changing nothing, 10,000 checkpoints vs 10" \
    "$(at "$long") bash --command 'sh -c true'" \
    "same, 10 checkpoints" "$(at "$short") bash --command 'sh -c true'"
bench_note "history rows: the same calls on two copies of one project, with 10,000 and with 10 checkpoints (ratio 1 = cost independent of the history)"
