#!/usr/bin/env python3
"""Writes a deterministic HTML page of about 6 MB in windows-1252 to standard output.

Used by bench/10-web.sh for webfetch's memory rows: some 200,000 short paragraphs with
accented letters (so the body needs decoding), an inline link in every 50th and a heading
before every 1,000th. Over webfetch's 5 MB body cap, so the page is also cut.
"""
import sys

PARAGRAPHS = 200_000
WORDS = ("café crème brûlée naïve façade déjà vu résumé señor über "
         "request response header buffer stream").split()


def words(seed, n):
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n))


def main():
    out = ['<!DOCTYPE html><html><head><meta charset="windows-1252">',
           "<title>Paragraph page</title></head><body>",
           "<h1>Paragraph memory page</h1>"]
    for i in range(PARAGRAPHS):
        if i % 1000 == 0:
            out.append(f"<h2>Part {i // 1000}</h2>")
        if i % 50 == 0:
            out.append(f'<p>{words(i, 2)} <a href="/p/{i}">link {i}</a></p>')
        else:
            out.append(f"<p>{words(i, 3)} {i}</p>")
    out.append("</body></html>")
    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("windows-1252"))


if __name__ == "__main__":
    main()
