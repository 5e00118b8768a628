#!/usr/bin/env python3
"""Runs the shoal commands of a document's shell examples, in order, and
fails naming every one that exits non-zero: the docs promise that every
example really runs (README's tour: test DocExamplesReadme; the rest:
`make docs-check`).

Every ```sh block's lines that start with `build/shoal` are run from the
repository root with `build/shoal` replaced by --binary, each under a
timeout; continuation lines (a trailing backslash) are joined and a
trailing `# comment` is dropped. Lines of other programs (sudo, scp,
systemctl, curl) are left out: they need a real board or a server the
example started by hand. A command that names a file an earlier example of
the same document writes finds it there, as a reader who follows the
document in order would. Paths under /tmp/ are moved into a directory of
this run's own (removed at the end), so that runs side by side, or files a
reader left there, do not meet.

  python3 scripts/run-doc-examples.py --binary build/shoal README.md
  python3 scripts/run-doc-examples.py --binary build/shoal --list docs/cli.md
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commands(path):
    """The `build/shoal` commands of the document's sh blocks, with the
    line each starts on."""
    text = open(path, encoding="utf-8").read()
    out = []
    for m in re.finditer(r"^```(sh|bash)\n(.*?)^```", text, re.S | re.M):
        first = text[: m.start(2)].count("\n") + 1
        lines = m.group(2).split("\n")
        i = 0
        while i < len(lines):
            start = i
            line = lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            i += 1
            # A comment after the command: two spaces or more, then #.
            line = re.sub(r"\s{2,}#.*$", "", line).strip()
            if line.startswith("build/shoal ") or line == "build/shoal":
                out.append((first + start, line))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True, help="the shoal to run")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds a command may take (default 600)")
    ap.add_argument("--list", action="store_true",
                    help="print the commands, run nothing")
    ap.add_argument("docs", nargs="+")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    tmp = tempfile.mkdtemp(prefix="shoal-doc-examples-")
    try:
        return run_all(a, binary, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_all(a, binary, tmp):
    failed = []
    ran = total = 0
    for doc in a.docs:
        path = doc if os.path.isabs(doc) else os.path.join(ROOT, doc)
        cmds = commands(path)
        total += len(cmds)
        for line_no, cmd in cmds:
            if a.list:
                print(f"{doc}:{line_no}: {cmd}")
                continue
            run = binary + re.sub(r"(?<![\w.])/tmp/", tmp + "/",
                                  cmd[len("build/shoal"):])
            t0 = time.monotonic()
            try:
                p = subprocess.run(["bash", "-c", run], cwd=ROOT,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL,
                                   timeout=a.timeout)
                rc, output = p.returncode, p.stdout.decode(errors="replace")
            except subprocess.TimeoutExpired as e:
                rc = "timeout"
                output = (e.stdout or b"").decode(errors="replace")
            ran += 1
            took = time.monotonic() - t0
            status = "ok" if rc == 0 else f"FAILED ({rc})"
            print(f"{doc}:{line_no}: {status} in {took:.1f} s: {cmd}",
                  flush=True)
            if rc != 0:
                failed.append((doc, line_no, cmd, output[-1500:]))
    if a.list:
        return 0
    if total == 0:
        print("no build/shoal examples in " + " ".join(a.docs), file=sys.stderr)
        return 1
    for doc, line_no, cmd, output in failed:
        print(f"\n{doc}:{line_no}: {cmd}\n{output}", file=sys.stderr)
    print(f"{ran - len(failed)} of {ran} examples ran", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
