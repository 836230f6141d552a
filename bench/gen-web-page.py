#!/usr/bin/env python3
"""Writes a deterministic documentation-like HTML page of about 1 MB to standard output.

Used by bench/10-web.sh: headings, paragraphs with inline links, lists, code blocks,
tables, plus the script and style blocks a converter must drop.
"""
import sys

TARGET = 1024 * 1024
WORDS = ("request response header body redirect timeout deadline buffer stream "
         "address resolver connector policy session registry capture preview").split()


def words(seed, n):
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n))


def section(i):
    parts = [
        f'<section id="s{i}"><h2>Section {i}: {words(i, 3)}</h2>',
        f'<p>{words(i, 40)} <a href="/docs/page{i}.html">see page {i}</a> '
        f'and <a href="https://example.com/ref/{i}">the reference</a>, '
        f'<code>fn_{i}()</code> <em>{words(i + 1, 6)}</em>.</p>',
        "<ul>" + "".join(f"<li>{words(i + j, 8)}</li>" for j in range(6)) + "</ul>",
        f'<h3>Example {i}</h3><pre><code class="language-rust">'
        f"fn example_{i}() -&gt; u32 {{\n    let x = {i};\n    x * 2\n}}\n</code></pre>",
        "<table><tr><th>name</th><th>value</th></tr>"
        + "".join(f"<tr><td>key{j}</td><td>{words(i * j, 3)}</td></tr>" for j in range(4))
        + "</table>",
        f"<script>window.track({i}, '{words(i, 5)}');</script></section>",
    ]
    return "\n".join(parts)


def main():
    out = ['<!DOCTYPE html><html><head><title>Bench page</title>',
           "<style>" + "body{margin:0}" * 200 + "</style>",
           "<script>" + "var a=1;" * 500 + "</script></head><body><main>",
           "<h1>Benchmark documentation page</h1>"]
    size = sum(len(p) for p in out)
    i = 0
    while size < TARGET:
        s = section(i)
        out.append(s)
        size += len(s) + 1
        i += 1
    out.append("</main></body></html>")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
