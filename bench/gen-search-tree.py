#!/usr/bin/env python3
"""Generates the search benchmark's tree: a monorepo-shaped directory of FILES files and
about BYTES bytes of text, deterministic for given arguments.

Usage: gen-search-tree.py DIR FILES BYTES

Shape: packages/pkgNN/{src,tests,docs}/... nested three to six levels, about 65% of the
files; packages/pkgNN/node_modules/... about 25%; vendor/... about 2%; .git/objects/...
about 8% (random bytes). A .gitignore lists node_modules/ and vendor/, so ripgrep (which
honours it inside a git repository) and tinytool (which prunes those directories) search
the same files. Modification times are spread over a year. The literal
`ZQXJ_RARE_TOKEN` occurs in 5 source files; the word `return` is on many lines of
every source file. No file is over 1 MB.
"""

import os
import random
import sys

RARE = "ZQXJ_RARE_TOKEN"
WORDS = (
    "alpha beta gamma delta value index count result buffer config request response "
    "handler parser token stream error state cache entry node tree path file line "
    "offset length width height items users orders session client server router"
).split()
EXTS = ["rs", "ts", "js", "py", "go", "md", "json", "toml"]


def make_pool(rng, lines):
    out = []
    for _ in range(lines):
        kind = rng.random()
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        if kind < 0.25:
            out.append(f"    return {a}_{b}({c}, {rng.randint(0, 9999)});")
        elif kind < 0.45:
            out.append(f"fn {a}_{b}(&self, {c}: usize) -> Option<{b.title()}> {{")
        elif kind < 0.65:
            out.append(f"    let {a} = self.{b}.get({c}).unwrap_or_default();")
        elif kind < 0.80:
            out.append(f"// {a} {b} {c}: keep the {b} of every {c} in {a} order")
        elif kind < 0.90:
            out.append("}")
        else:
            out.append(f"    if {a}.len() > {rng.randint(1, 512)} {{ {b}.push({c}); }}")
    return "\n".join(out) + "\n"


def main():
    root, files, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(7)
    pool = make_pool(rng, 200_000)
    mean = total / files
    now = 1_760_000_000
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("node_modules/\nvendor/\n")
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    with open(os.path.join(root, ".git", "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
    packages = max(4, files // 1500)
    # About ten files per directory, as in a real repository.
    dirs_per_package = max(4, files // packages // 15)
    package_dirs = []
    for _ in range(packages):
        dirs = []
        for _ in range(dirs_per_package):
            parts = [rng.choice(["src", "tests", "docs", "src", "src"])]
            parts += [f"{rng.choice(WORDS)}{rng.randrange(3)}" for _ in range(rng.randint(1, 4))]
            dirs.append("/".join(parts))
        package_dirs.append(dirs)
    rare_left = 5
    rare_every = max(2, int(files * 0.6) // 5)
    sources = 0
    for i in range(files):
        r = rng.random()
        p = rng.randrange(packages)
        pkg = f"packages/pkg{p:03d}"
        if r < 0.08:
            obj = f"{rng.getrandbits(32):08x}"
            rel = f".git/objects/{obj[:2]}/{obj[2:]}{i:06d}"
            data = rng.randbytes(int(rng.uniform(0.2, 1.8) * mean))
        elif r < 0.33:
            dep = f"dep{rng.randrange(40):03d}"
            rel = f"{pkg}/node_modules/{dep}/lib/m{rng.randrange(3)}/f{i:06d}.js"
            data = None
        elif r < 0.35:
            rel = f"vendor/v{rng.randrange(20):02d}/src/f{i:06d}.go"
            data = None
        else:
            rel = f"{pkg}/{rng.choice(package_dirs[p])}/f{i:06d}.{rng.choice(EXTS)}"
            data = None
        if data is None:
            size = min(int(rng.expovariate(1 / mean)) + 200, 1_000_000)
            start = rng.randrange(0, len(pool) - size - 1)
            start = pool.index("\n", start) + 1
            text = pool[start : start + size]
            text = text[: text.rfind("\n") + 1]
            if rel.startswith("packages/") and "/node_modules/" not in rel:
                sources += 1
                if rare_left and sources % rare_every == rare_every // 2:
                    text += f"const MARKER: &str = \"{RARE}\";\n"
                    rare_left -= 1
            data = text.encode()
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        t = now - rng.randrange(365 * 86400)
        os.utime(path, (t, t))


if __name__ == "__main__":
    main()
