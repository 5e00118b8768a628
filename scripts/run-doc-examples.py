#!/usr/bin/env python3
"""Runs the shoal commands of a document's shell examples, in order, and
fails naming every one that exits non-zero or prints other than the
document shows: the docs promise that every example really runs (README's tour: test DocExamplesReadme; the rest:
`make docs-check`).

Every ```sh block that runs `build/shoal` is run from the repository root
with `build/shoal` replaced by --binary, under a timeout, as one script
that stops at its first failing command; servers it starts in the
background run on for the document's later blocks, as in a reader's
terminal, and are stopped at the document's end. A block that needs
something set up by hand (sudo, scp, systemctl, make, qemu, a Prometheus
server: BY_HAND), or marked `<!-- by hand: WHY -->` just before it, is
not run, and said so. A command that names a file an
earlier example of the same document writes finds it there, as a reader
who follows the document in order would. Paths under /tmp/ are moved into a
directory of the document's own in this run (removed at the end), so that
runs side by side, other documents, or files a reader left there, do not
meet.

An output a document shows is checked too. A fenced block right after a
comment `<!-- output: COMMAND -->` is what COMMAND prints, run at that
point of the document (after the examples above it, so a server or a file
they made is there; a pipe such as `| head -n 12` keeps part of it);
`<!-- output: above -->` is what the example just above printed. Each
line of the block must come, in order, among the lines printed, compared
with every number and hash masked and runs of blanks made one (a line
`...` stands for lines left out). `--write-outputs` writes what was
printed into those blocks instead. The `# ` comment lines right after a
command inside an example are output it shows, and are held to what the
example printed the same way. `<!-- output by hand: WHY -->` marks
an output that only a board or a by-hand setup prints; it is listed, not
run. scripts/doc_outputs_test.py holds every shown output to one of these.

  python3 scripts/run-doc-examples.py --binary build/shoal README.md
  python3 scripts/run-doc-examples.py --binary build/shoal --list docs/cli.md
  python3 scripts/run-doc-examples.py --binary build/shoal --write-outputs docs/cli.md
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Programs that need what a reader sets up by hand (a board, a package
# manager, a long build, a server outside shoal): a block that runs one is
# not run, and the run says so.
BY_HAND = {"sudo", "scp", "ssh", "systemctl", "apt", "apt-get", "dpkg",
           "make", "qemu-aarch64", "prometheus", "dot", "bash", "ip",
           "journalctl", "docker", "pip", "git"}


def joined(lines):
    """Lines with their continuations (a trailing backslash) joined, each
    with its index in `lines`."""
    out, i = [], 0
    while i < len(lines):
        start, line = i, lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        out.append((start, line))
        i += 1
    return out


OUTPUT = re.compile(
    r"^<!-- output(?P<hand> by hand)?:[ \t]*(?P<what>.*?)[ \t]*-->[ \t]*\n"
    r"```[a-z]*\n(?P<body>.*?)^```", re.S | re.M)


def outputs(path):
    """The document's shown outputs, as dicts: line (of the marker), what
    (the command, `above`, or why it is by hand), hand, the block's lines,
    and start/end (the block's text span in the document)."""
    text = open(path, encoding="utf-8").read()
    out = []
    for m in OUTPUT.finditer(text):
        out.append({"line": text[: m.start()].count("\n") + 1,
                    "what": m.group("what"), "hand": bool(m.group("hand")),
                    "lines": m.group("body").split("\n")[:-1],
                    "start": m.start("body"), "end": m.end("body")})
    return out


NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?")
# Hashes, certificate serials and the like: 8 or more hex digits, some
# of them letters (not a number's exponent, as in 2.38419e-07).
HASH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b")


def masked(line):
    """A line as compared: hashes and numbers masked, blanks made one."""
    line = HASH.sub("#", line)
    line = NUMBER.sub("#", line)
    return " ".join(line.split())


ELIDED = re.compile(r"\.\.\.|<[^<>]*>")


def line_pattern(line):
    """A shown line as a regular expression over masked printed lines:
    `...` and `<placeholder>` inside it stand for anything."""
    parts = ELIDED.split(line)
    return re.compile(".*".join(re.escape(masked(p)) if p.strip() else ""
                                for p in parts).strip())


def missing_line(shown, printed):
    """The first line of `shown` not found, in order, among `printed`
    (both masked; a line `...` skips, `...` inside a line stands for
    anything), or None when every one is."""
    got = [masked(l) for l in printed]
    at = 0
    for line in shown:
        if not masked(line) or masked(line) == "...":
            continue
        want = line_pattern(line)
        while at < len(got) and not want.fullmatch(got[at]):
            at += 1
        if at == len(got):
            return line
        at += 1
    return None


def shown_in_block(text):
    """The output an example shows in its comments: the `# ` lines right
    after a command (or after such lines), without the `# `."""
    shown, after_command = [], False
    for line in text.split("\n"):
        if line.startswith("#"):
            if after_command:
                shown.append(line[2:] if line.startswith("# ") else "")
            continue
        stripped = line.strip()
        after_command = bool(stripped) and not stripped.endswith("\\")
        if not stripped:
            after_command = False
    return shown


def examples(path):
    """The document's sh blocks that run shoal, as (first line, block text,
    what it needs set up by hand: BY_HAND programs it runs, if any)."""
    text = open(path, encoding="utf-8").read()
    out = []
    for m in re.finditer(r"^```(sh|bash)\n(.*?)^```", text, re.S | re.M):
        first = text[: m.start(2)].count("\n") + 1
        body = m.group(2)
        lines = body.split("\n")
        cmds = [(first + i, re.sub(r"\s{2,}#.*$", "", l).strip())
                for i, l in joined(lines)]
        shoal = [(n, c) for n, c in cmds
                 if c.startswith("build/shoal ") or c == "build/shoal"]
        if not shoal:
            continue
        # A heredoc's lines are data, not commands.
        words, heredoc = set(), None
        for _, c in cmds:
            if heredoc is not None:
                if c == heredoc:
                    heredoc = None
                continue
            h = re.search(r"<<-?\s*'?\"?(\w+)", c)
            if h:
                heredoc = h.group(1)
            if c and not c.startswith("#"):
                words.add(c.split()[0])
        needs = sorted(words & BY_HAND)
        # An example marked `<!-- by hand: WHY -->` needs what WHY says.
        hand = re.search(r"<!-- by hand: (.*?) -->[ \t]*\n$",
                         text[: m.start()])
        if hand:
            needs.append(hand.group(1))
        out.append((first, body, needs))
    return out


def commands(path):
    """Every build/shoal line of the document's sh blocks (for --list)."""
    out = []
    for n, text, _ in examples(path):
        for i, line in joined(text.split("\n")):
            line = re.sub(r"\s{2,}#.*$", "", line).strip()
            if line.startswith("build/shoal"):
                out.append((n + i, line))
    return out


def stop(sessions):
    """Ends what the blocks started (each block is a session of its own):
    SIGTERM, then SIGKILL for what is still there after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        alive = []
        for sid in sessions:
            try:
                os.killpg(sid, sig)
                alive.append(sid)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [sid for sid in alive if group_alive(sid)]
        if not alive:
            return


def group_alive(sid):
    try:
        os.killpg(sid, 0)
        return True
    except ProcessLookupError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True, help="the shoal to run")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds a command may take (default 600)")
    ap.add_argument("--list", action="store_true",
                    help="print the commands, run nothing")
    ap.add_argument("--write-outputs", action="store_true",
                    help="write what each marked output's command printed "
                         "into its block, instead of comparing")
    ap.add_argument("docs", nargs="+")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    tmp = tempfile.mkdtemp(prefix="shoal-doc-examples-")
    try:
        return run_all(a, binary, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def substituted(text, binary, tmp):
    """A block or command as run: /tmp/ as this run's own directory, then
    build/shoal as the binary (in that order: the binary may lie under
    /tmp/ itself)."""
    body = re.sub(r"(?<![\w.])/tmp/", tmp + "/", text)
    return re.sub(r"(^|[\s$(|;&])build/shoal\b",
                  lambda m: m.group(1) + binary, body)


def as_shown(printed, binary, tmp):
    """What a command printed, as a reader's run would show it."""
    return printed.replace(binary, "build/shoal").replace(tmp + "/", "/tmp/")


def run_script(body, timeout, sessions):
    """Runs `body` with bash from the repository root in a session of its
    own; returns (exit code or "timeout", what it printed)."""
    # Output to a file, not a pipe: a server the block starts in the
    # background keeps running for the document's later blocks (as in a
    # reader's terminal) and would hold a pipe open.
    with tempfile.TemporaryFile() as log:
        try:
            p = subprocess.Popen(["bash", "-c", body], cwd=ROOT,
                                 stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL,
                                 start_new_session=True)
            sessions.append(p.pid)
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = "timeout"
            stop([p.pid])
            p.wait()
        log.seek(0)
        return rc, log.read().decode(errors="replace")


def run_all(a, binary, tmp):
    failed, skipped, by_hand = [], [], []
    ran = total = checked = 0
    top = tmp
    for doc in a.docs:
        path = doc if os.path.isabs(doc) else os.path.join(ROOT, doc)
        # Each document's /tmp/ of its own: two documents may make the
        # same file (a CA in /tmp/shoal-certs) as a reader of each would.
        tmp = tempfile.mkdtemp(prefix="doc-", dir=top)
        if a.list:
            for line_no, cmd in commands(path):
                print(f"{doc}:{line_no}: {cmd}")
            continue
        exs = examples(path)
        outs = outputs(path)
        total += len(exs) + len(outs)
        items = sorted([(n, "example", (n, t, nd)) for n, t, nd in exs] +
                       [(o["line"], "output", o) for o in outs],
                       key=lambda i: i[0])
        sessions, writes = [], []
        last = None  # what the example above printed; None: it did not run
        for line_no, kind, item in items:
            if kind == "output":
                o = item
                if o["hand"]:
                    by_hand.append((doc, line_no, o["what"]))
                    print(f"{doc}:{line_no}: output by hand: {o['what']}",
                          flush=True)
                    continue
                if o["what"] == "above":
                    printed, what = last, "the example above"
                    if printed is None:
                        skipped.append((doc, line_no, ["the example above"]))
                        print(f"{doc}:{line_no}: output not checked: the "
                              "example above did not run", flush=True)
                        continue
                else:
                    what = o["what"]
                    _, printed = run_script(
                        substituted(o["what"], binary, tmp), a.timeout,
                        sessions)
                    printed = as_shown(printed, binary, tmp)
                checked += 1
                if a.write_outputs:
                    writes.append((o["start"], o["end"], printed))
                    print(f"{doc}:{line_no}: output written: {what}",
                          flush=True)
                    continue
                miss = missing_line(o["lines"], printed.split("\n"))
                status = "ok" if miss is None else "DIFFERS"
                print(f"{doc}:{line_no}: output {status}: {what}", flush=True)
                if miss is not None:
                    failed.append((doc, line_no, "output of " + what,
                                   f"the document shows\n  {miss}\nwhich "
                                   f"is not among the lines printed:\n"
                                   + printed[-1500:]))
                continue
            _, text, needs = item
            what = text.strip().split("\n")[0] + (" ..." if "\n" in text.strip() else "")
            last = None
            if needs:
                skipped.append((doc, line_no, needs))
                print(f"{doc}:{line_no}: not run, needs {', '.join(needs)}: {what}",
                      flush=True)
                continue
            # A whole block runs as one script that stops at its first
            # failing command.
            body = substituted(text, binary, tmp)
            # `kill %1` stops what the reader started in this block or an
            # earlier one (one terminal); here every block is a shell of its
            # own, and the document's end stops them all.
            body = re.sub(r"^(kill %.*)$", r"\1 2>/dev/null || true", body,
                          flags=re.M)
            body = "set -eo pipefail\n" + body
            t0 = time.monotonic()
            rc, output = run_script(body, a.timeout, sessions)
            last = as_shown(output, binary, tmp)
            ran += 1
            took = time.monotonic() - t0
            status = "ok" if rc == 0 else f"FAILED ({rc})"
            print(f"{doc}:{line_no}: {status} in {took:.1f} s: {what}",
                  flush=True)
            if rc != 0:
                failed.append((doc, line_no, what, output[-1500:]))
                continue
            shown = shown_in_block(text)
            miss = missing_line(shown, last.split("\n")) if shown else None
            if miss is not None:
                print(f"{doc}:{line_no}: its comments show a line it did "
                      f"not print: {miss}", flush=True)
                failed.append((doc, line_no, what,
                               f"the example's comments show\n  {miss}\n"
                               "which is not among the lines printed:\n"
                               + last[-1500:]))
        stop(sessions)
        if writes:
            text = open(path, encoding="utf-8").read()
            for start, end, printed in sorted(writes, reverse=True):
                body = printed if printed.endswith("\n") or not printed \
                    else printed + "\n"
                text = text[:start] + body + text[end:]
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if a.list:
        return 0
    if total == 0:
        print("no build/shoal examples or outputs in " + " ".join(a.docs),
              file=sys.stderr)
        return 1
    for doc, line_no, cmd, output in failed:
        print(f"\n{doc}:{line_no}: {cmd}\n{output}", file=sys.stderr)
    print(f"{ran + checked - len(failed)} of {ran + checked} examples and "
          f"shown outputs passed"
          + (f"; {len(skipped)} not run, needing what a reader sets up by hand"
             if skipped else "")
          + (f"; {len(by_hand)} outputs shown from boards or by-hand setups"
             if by_hand else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
