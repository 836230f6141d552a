#!/usr/bin/env bash
# Search rows (issue 7): grep against ripgrep and glob against fd and `rg --files`, on two
# generated monorepo-shaped trees (20,000 files / 200 MB and 100,000 files / 1 GB, with
# node_modules, vendor and .git; see gen-search-tree.py), cached under $BENCH_CACHE.
# The trees' .gitignore lists node_modules/ and vendor/, so ripgrep, which honours it,
# searches the same files tinytool does (tinytool prunes those directories by name).
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Prints the path of a generated tree, creating it first when missing (into a temporary
# name, renamed when complete, so an interrupted generation is never reused).
search_tree() {
    local files="$1" bytes="$2" path="$BENCH_CACHE/search-tree-$1-v1"
    if [ ! -d "$path" ]; then
        echo "bench: generating $path" >&2
        rm -rf "$path.partial"
        python3 "$BENCH_ROOT/bench/gen-search-tree.py" "$path.partial" "$files" "$bytes"
        mv "$path.partial" "$path"
    fi
    printf '%s\n' "$path"
}

for size in 20000:200000000 100000:1000000000; do
    files=${size%%:*}
    tree=$(search_tree "$files" "${size##*:}")
    label="$((files / 1000))k files"
    # The first run of a row warms the page cache; hyperfine's warm-up runs do the rest.
    bench_row "grep rare literal, $label" \
        "$TT --dir $tree grep --pattern ZQXJ_RARE_TOKEN" \
        "rg -n" "rg -n ZQXJ_RARE_TOKEN $tree"
    bench_row "grep rare literal, $label" \
        "$TT --dir $tree grep --pattern ZQXJ_RARE_TOKEN" \
        "rg -n --sortr modified" "rg -n --sortr modified ZQXJ_RARE_TOKEN $tree"
    bench_row "grep common word (cap 500), $label" \
        "$TT --dir $tree grep --pattern return" \
        "rg -n (all matches)" "rg -n return $tree"
    bench_row "glob **/*.rs, $label" \
        "$TT --dir $tree glob --pattern '**/*.rs'" \
        "fdfind -g" "fdfind -g '*.rs' $tree"
    bench_row "glob **/*.rs, $label" \
        "$TT --dir $tree glob --pattern '**/*.rs'" \
        "rg --files -g" "rg --files -g '*.rs' $tree"
done

bench_note "issue 7 acceptance (20k files): rare literal within 1.3x of rg -n and faster than rg --sortr modified; capped common word at least 5x faster than rg -n; glob within 1.3x of fd"
