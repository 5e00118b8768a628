#!/usr/bin/env python3
"""Writes a benchmark's results into a document between its markers.

    bench/write_block.py DOC NAME FILE

replaces what lies between `<!-- NAME:begin -->` and `<!-- NAME:end -->`
in DOC with the contents of FILE (markdown), or appends the block when DOC
has no such markers yet. The bench scripts call it, so that a document
holds what the script printed last, and nothing by hand in between.
"""
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: write_block.py DOC NAME FILE")
    path, name, body_file = sys.argv[1:4]
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    body = open(body_file).read().strip("\n")
    text = open(path).read()
    block = f"{begin}\n{body}\n{end}"
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    open(path, "w").write(text)


if __name__ == "__main__":
    main()
