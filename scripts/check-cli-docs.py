#!/usr/bin/env python3
"""Fails when docs/cli.md and the binaries' `--help` disagree on a flag.

The commands come from the binary itself: the top-level `--help` lists them
(CLI11's "Subcommands:"), and each group's `--help` its own, down to the
leaves; each leaf's `--help` lists its options. docs/cli.md has a `## shoal
COMMAND` section per command (`## shoal run --local`, `## shoal serve /
infer-remote`, `## shoal cluster up / down`; a group's section covers its
subcommands). Two checks:

- documented: every long flag of a command is named in one of its
  sections, in prose or on a command line of that command (`--help` and
  `--version` aside). An example's output documents nothing.
- exists: every flag the docs name exists. On a command line (a usage
  synopsis, an example in a code block, or a `shoal plan --foo` span in
  prose) the flag must be one of that very command's; a bare `--foo` in a
  section's prose must be a flag of the section's commands or of a command
  named in the same paragraph (`run --check`, "see `shoal worker`"); a
  flag in a command's output must be some command's. Command lines in the
  other docs/*.md and README.md are held to the first rule too.

shoal-worker's commands are `shoal worker`, `shoal kernels` and `shoal
certs enroll` (src/cli/worker_main.cc registers the same functions); with
--worker-binary (when the file exists), its `--help` is checked against
them as well.

Usage: check-cli-docs.py --binary build/shoal [--worker-binary W]
                         [--docs DIR] [--readme FILE]
       check-cli-docs.py --binary build/shoal --self-test
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FLAG = re.compile(r"(?<![\w/.-])(--[a-z0-9][a-z0-9-]*\*?)")
SHORT = re.compile(r"^-[a-zA-Z]$")
PROGRAM = re.compile(r"^(?:\S*/)?(shoal|shoal-worker)$")
SPAN = re.compile(r"`([^`]+)`")
WORKER = "<worker>"  # the root of shoal-worker's commands in the tree
# Flags a doc names on purpose although no command has them.
NOT_FLAGS = {
    # cli.md shows what a typo of --strategy prints.
    "--stratgy",
}


# --- the binaries -------------------------------------------------------

def help_text(binary, path):
    out = subprocess.run([binary] + list(path) + ["--help"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=30)
    if out.returncode != 0:
        raise SystemExit("%s %s --help exited %d:\n%s" % (
            binary, " ".join(path), out.returncode, out.stdout))
    return out.stdout


def parse_help(text, aliases):
    """(set of flags, list of subcommand names) of one `--help`; adds each
    option's other names (`-o` for `--output`) to `aliases`."""
    flags, subs, where = set(), [], None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            where = line[:-1]
            continue
        if where == "Subcommands":
            m = re.match(r"^  (\S+)", line)
            if m:
                subs.append(m.group(1))
            continue
        m = re.match(r"^  (-\S+)", line)
        if m:
            names = [n for n in m.group(1).split(",") if n.startswith("-")]
            flags.update(names)
            for n in names:
                aliases.setdefault(n, set()).update(names)
    flags -= {"-h", "--help", "--version"}
    return flags, subs


def command_tree(binary, aliases, root=()):
    """{path tuple: set of flags} for every command, groups included; the
    root is `root`."""
    tree, todo = {}, [()]
    while todo:
        path = todo.pop()
        flags, subs = parse_help(help_text(binary, path), aliases)
        tree[root + path] = flags
        todo.extend(path + (s,) for s in subs)
    return tree


# --- the docs -----------------------------------------------------------

class Mention:
    def __init__(self, flag, line, command=None, output=False):
        self.flag = flag          # "--foo", "-o" or "--tls-*"
        self.line = line          # 1-based line of the doc
        self.command = command    # path tuple on a command line, else None
        self.output = output      # in an example's output
        self.paragraph = None


def resolve(words, tree, context=()):
    """The command a run of words names, and how many words it took:
    `build/shoal lcp split`, `shoal plan`, `run`, or `up` within the
    section of `cluster`. (None, 0) when the words name no command."""
    if not words:
        return None, 0
    program = PROGRAM.match(words[0])
    if program:
        i = 1
        path = (WORKER,) if program.group(1) == "shoal-worker" else ()
    else:
        # A span without `shoal`: a top-level command or a subcommand of
        # the section's group.
        for base in [context[:k] for k in range(len(context), -1, -1)]:
            if base + (words[0],) in tree:
                path, i = base + (words[0],), 1
                break
        else:
            return None, 0
    while i < len(words) and path + (words[i],) in tree:
        path += (words[i],)
        i += 1
    return path, i


def clean(word):
    return word.split("=", 1)[0].strip("[](),;:.|")


def command_flags(words, tree, line, context=()):
    """Mentions of the flags on one command line, or None when the words do
    not start with a command."""
    path, taken = resolve(words, tree, context)
    if path is None:
        return None
    if path in ((), (WORKER,)) and taken < len(words) \
            and not words[taken].startswith("-"):
        return None  # "shoal: error: ...", "shoal worker: not announcing"
    found = []
    for w in map(clean, words[taken:]):
        if FLAG.fullmatch(w) or SHORT.match(w):
            found.append(Mention(w, line, command=path))
    return found


def split_shell(line):
    """The simple commands of a shell line that run shoal, each as words
    from the program on: `build/shoal plan ...`, `sudo shoal ...`,
    `TOKEN=$(build/shoal certs token ...)`, `qemu-aarch64 -L DIR -cpu
    cortex-a72 build-arm64/shoal-worker kernels ...`."""
    out = []
    for part in re.split(r"\|\||&&|[|;&]|\$\(|\)|>", line):
        words = part.split()
        k = 0
        while k < len(words) and (words[k] in ("sudo", "time", "nice") or
                                  re.match(r"^[A-Z_]+=", words[k])):
            k += 1
        if k < len(words) and words[k].startswith("qemu-"):
            while k < len(words) and not PROGRAM.match(words[k]):
                k += 1
        if k < len(words) and PROGRAM.match(words[k]):
            out.append(words[k:])
    return out


def free_flags(text, line, output=False):
    return [Mention(m.group(1), line, output=output)
            for m in FLAG.finditer(text)]


def scan_doc(path, tree):
    """Sections of a doc, [heading, first line, mentions], in order (the
    part before the first `## ` heading is the section ''), and per
    paragraph the commands it names; each mention knows its paragraph."""
    with open(path) as f:
        lines = f.read().split("\n")
    sections = [["", 1, []]]
    paragraphs = []
    state = {"context": ()}

    def add(mentions):
        for m in mentions:
            m.paragraph = len(paragraphs) - 1
            sections[-1][2].append(m)

    para_lines = []

    def flush_paragraph():
        if not para_lines:
            return
        context = state["context"]
        text = "\n".join(t for _, t in para_lines)
        paragraphs.append(set())
        named = paragraphs[-1]
        line_of = [n for n, t in para_lines for _ in range(len(t) + 1)]
        inside = []
        for s in SPAN.finditer(text):
            words = s.group(1).split()
            n = line_of[s.start(1)]
            path, _ = resolve(words, tree, context)
            if path is not None and path not in ((), (WORKER,)):
                named.add(path)
            if path is None and len(words) > 1 \
                    and not words[0].startswith("-") \
                    and words[1].startswith("-"):
                # `curl -s ...`, `scripts/install-deps.sh --worker`: another
                # program's flags.
                inside.append((s.start(), s.end()))
                continue
            found = command_flags(words, tree, n, context)
            if found is not None:
                add(found)
                inside.append((s.start(), s.end()))
        for m in FLAG.finditer(text):
            if not any(a <= m.start() < b for a, b in inside):
                add([Mention(m.group(1), line_of[m.start()])])
        del para_lines[:]

    fence, pending, skipping = None, None, False
    for n, raw in enumerate(lines, 1):
        if raw.startswith("```"):
            flush_paragraph()
            if fence is None:
                fence = raw[3:].strip() or "text"
                paragraphs.append(set())
            else:
                fence = None
            pending = None
            continue
        if fence is not None:
            stripped = raw.strip()
            if skipping:
                skipping = stripped.endswith("\\")
                continue
            if stripped.startswith("#"):
                add(free_flags(stripped, n, output=True))
                pending = None
                continue
            if pending is not None and (
                    pending[1] or (fence == "text" and raw[:1].isspace())):
                # The flags of a continued command line: after a trailing
                # backslash, or a synopsis's indented next line.
                for w in map(clean, stripped.rstrip("\\").split()):
                    if FLAG.fullmatch(w) or SHORT.match(w):
                        add([Mention(w, n, command=pending[0])])
                pending = (pending[0], stripped.endswith("\\"))
                continue
            pending = None
            if fence == "text":
                # A synopsis line (`shoal ...`), or output: no shell here.
                words = stripped.split()
                found = None
                if words and PROGRAM.match(words[0]):
                    found = command_flags(words, tree, n, state["context"])
                if found is None:
                    add(free_flags(stripped, n, output=True))
                else:
                    add(found)
                    path, _ = resolve(stripped.split(), tree,
                                      state["context"])
                    pending = (path, False)
                continue
            shell = split_shell(stripped.rstrip("\\"))
            if not shell:
                # Another program's command line (curl, cmake, ...), and
                # the lines it continues onto.
                skipping = stripped.endswith("\\")
                continue
            for words in shell:
                found = command_flags(words, tree, n, state["context"])
                if found is None:
                    add(free_flags(" ".join(words), n, output=True))
                    continue
                add(found)
                # A continuation line belongs to the last command on it.
                path, _ = resolve(words, tree, state["context"])
                pending = (path, stripped.endswith("\\"))
            continue
        m = re.match(r"^(#+) (.*)", raw)
        if m:
            flush_paragraph()
            if len(m.group(1)) == 2:
                sections.append([m.group(2), n, []])
                commands = heading_commands(m.group(2), tree)
                state["context"] = commands[0] if commands else ()
            continue
        if not raw.strip():
            flush_paragraph()
            continue
        para_lines.append((n, raw))
    flush_paragraph()
    return sections, paragraphs


def heading_commands(heading, tree):
    """The commands a `## shoal ...` heading names: `shoal run --local` ->
    [run]; `shoal serve / infer-remote` -> [serve, infer-remote]; `shoal
    cluster up / down` -> [cluster up, cluster down]; [] for any other."""
    parts = [p.strip().strip("`") for p in heading.split(" / ")]
    if not parts[0].startswith("shoal "):
        return []
    first, _ = resolve(parts[0].split(), tree)
    if not first:
        return []
    found = [first]
    for p in parts[1:]:
        word = p.split()[0]
        for base in (first[:-1], ()):
            if base + (word,) in tree:
                found.append(base + (word,))
                break
    return found


def covered(path, commands):
    """Whether a section of these commands covers `path` (a group's
    section covers its subcommands)."""
    return any(path[:len(c)] == c for c in commands)


def flag_exists(flag, flags):
    if flag.endswith("*"):
        return any(f.startswith(flag[:-1]) for f in flags)
    return flag in flags


# --- the checks ---------------------------------------------------------

# shoal-worker's commands and the shoal commands they are.
WORKER_TWINS = {(WORKER,): ("worker",), (WORKER, "worker"): ("worker",),
                (WORKER, "kernels"): ("kernels",),
                (WORKER, "enroll"): ("certs", "enroll")}


def name(path):
    if path and path[0] == WORKER:
        return " ".join(("shoal-worker",) + path[1:])
    return " ".join(("shoal",) + path)


def check(binary, worker_binary, docs, readme):
    aliases = {}
    tree = command_tree(binary, aliases)
    if worker_binary:
        # shoal-worker runs `worker` unless its first word is another of
        # its commands (src/cli/worker_main.cc), so its own `--help` is the
        # worker's and lists no subcommands: ask each by name.
        for w in WORKER_TWINS:
            flags, _ = parse_help(help_text(worker_binary, w[1:]), aliases)
            tree[w] = flags
    else:
        # Without the worker's build, its commands are shoal's twins.
        for w, s in WORKER_TWINS.items():
            tree[w] = tree[s]
    leaves = {p: f for p, f in tree.items() if p and p[0] != WORKER}
    every_flag = set().union(*tree.values()) | {"--help", "--version"}
    cli = os.path.join(docs, "cli.md")
    errors = []

    def where(doc, m):
        return "%s:%d" % (doc, m.line)

    def command_exists(doc, m):
        flags = tree[m.command] | {"-h", "--help", "--version"}
        if m.command == (WORKER,):
            flags |= tree[(WORKER, "worker")]  # `shoal-worker --listen ...`
        if m.flag in NOT_FLAGS or flag_exists(m.flag, flags):
            return True
        errors.append("%s: `%s` has no flag %s" % (
            where(doc, m), name(m.command), m.flag))
        return False

    # Command lines in every doc.
    others = sorted(os.path.join(docs, f) for f in os.listdir(docs)
                    if f.endswith(".md") and f != "cli.md")
    if readme:
        others.append(readme)
    for doc in others:
        sections, _ = scan_doc(doc, tree)
        for _, _, mentions in sections:
            for m in mentions:
                if m.command is not None:
                    command_exists(doc, m)

    # docs/cli.md: every mention, and every flag documented.
    sections, paragraphs = scan_doc(cli, tree)
    documented = {}  # command -> flags named for it in its sections
    sectioned = set()
    for heading, _, mentions in sections:
        commands = [()] if heading == "" else heading_commands(heading, tree)
        if not commands:
            continue
        mine = [p for p in leaves if covered(p, commands)]
        if heading:
            sectioned.update(mine)
        own = set().union(*(tree[p] for p in mine)) if mine else set()
        for m in mentions:
            if m.command is not None:
                # A command line documents its flags in the command's own
                # sections only: `run --check` in plan's shows, not tells.
                twin = WORKER_TWINS.get(m.command, m.command)
                if command_exists(cli, m) and heading and \
                        covered(twin, commands):
                    documented.setdefault(twin, set()).add(m.flag)
                continue
            if m.flag in NOT_FLAGS:
                continue
            if m.output:
                if not flag_exists(m.flag, every_flag):
                    errors.append("%s: no command has the flag %s (shown in "
                                  "an example's output)" % (where(cli, m),
                                                            m.flag))
                continue
            named = paragraphs[m.paragraph]
            pool = set(every_flag) if heading == "" else set(own)
            for p in tree:
                if covered(p, named):
                    pool |= tree[p]
            if not flag_exists(m.flag, pool):
                errors.append(
                    "%s: %s is not a flag of %s%s (section '%s')" % (
                        where(cli, m), m.flag,
                        " or ".join("`%s`" % name(c) for c in commands),
                        "".join(", nor of `%s`" % name(c)
                                for c in sorted(named)),
                        heading or "introduction"))
                continue
            # A bare flag in prose documents it for the section's commands.
            if heading:
                for p in mine:
                    documented.setdefault(p, set()).add(m.flag)

    for path, flags in sorted(leaves.items()):
        if path not in sectioned:
            if flags:
                errors.append("%s: `%s` has no section (`## %s`)" % (
                    cli, name(path), name(path)))
            continue
        have = documented.get(path, set())
        for flag in sorted(flags):
            # Documented by any of its names (`-o` for `--output`).
            if flag.startswith("--") and not (aliases[flag] & have):
                errors.append("%s: `%s %s` is not documented in the "
                              "command's section (its --help lists it)" % (
                                  cli, name(path), flag))
    if worker_binary:
        for w, s in WORKER_TWINS.items():
            for flag in sorted(tree.get(w, set()) - tree[s]):
                errors.append("%s: `%s %s` is not documented: `%s` has no "
                              "such flag" % (cli, name(w), flag, name(s)))
    return errors, len(leaves)


def self_test(binary, docs):
    """Plants a flag no command has on an example line of `shoal plan` and
    removes every mention of a flag `shoal plan` has: the check must report
    both, naming the command, the flag and the doc; the docs as they are
    must pass."""
    with open(os.path.join(docs, "cli.md")) as f:
        text = f.read()
    results = []
    with tempfile.TemporaryDirectory() as d:
        for f in os.listdir(docs):
            if f.endswith(".md"):
                shutil.copy(os.path.join(docs, f), d)
        errors, _ = check(binary, None, d, None)
        results.append(("the docs as they are pass", not errors))
        example = "build/shoal plan vgg16 --devices 8 --strategy spatial"
        planted = text.replace(example, example + " --no-such-flag", 1)
        planted = re.sub(r"--halo-input-read-factor\b", "", planted)
        with open(os.path.join(d, "cli.md"), "w") as f:
            f.write(planted)
        errors, _ = check(binary, None, d, None)
        results.append(("a flag that does not exist is reported", any(
            "cli.md:" in e and "`shoal plan` has no flag --no-such-flag" in e
            for e in errors)))
        results.append(("a flag left undocumented is reported", any(
            "cli.md:" in e and
            "`shoal plan --halo-input-read-factor` is not documented" in e
            for e in errors)))
    for what, passed in results:
        print("%s: %s" % ("ok" if passed else "FAILED", what))
    return all(p for _, p in results)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--worker-binary")
    ap.add_argument("--docs", default=os.path.join(root, "docs"))
    ap.add_argument("--readme", default=os.path.join(root, "README.md"))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return 0 if self_test(a.binary, a.docs) else 1
    worker = a.worker_binary if a.worker_binary and \
        os.path.exists(a.worker_binary) else None
    errors, count = check(a.binary, worker, a.docs, a.readme)
    for e in errors:
        print(e)
    if errors:
        print("%d disagreements between the docs and --help" % len(errors))
        return 1
    print("docs/cli.md documents every flag of %d commands%s, and the docs "
          "name no flag that does not exist" % (
              count, " and of " + worker if worker else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
