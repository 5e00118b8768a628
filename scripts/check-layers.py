#!/usr/bin/env python3
"""Fails when a stage of shoal reaches a stage it does not build on.

Each folder of src/ is a stage, a static library `shoal_<stage>` declared in
CMakeLists.txt with the stages it builds on (`shoal_stage(NAME STAGES ...)`);
the configure step writes the declarations to <build>/stages.txt, one line
per stage: `name: dep dep ...`. Two checks, both against the declarations:

- includes: a file of a stage includes headers only of its own stage and
  of the stages it names. Tests and their helpers (*_test.cc,
  *_slowtest.cc, *_fuzz.cc, *test_util.h) obey the layering too, a little
  more loosely: they may include any stage their stage builds on, directly
  or not (a test of serve may run the engine), never one above or beside
  it. A test that needs a higher stage is an integration test and lives
  in the folder of the highest stage it tests;
- symbols: what a stage's archive leaves undefined (the calls the linker
  resolves) is defined in its own archive, in a stage below it (the closure
  of what it names), or outside shoal. This catches a call with no include
  behind it, such as a function declared in a lower stage's header and
  defined in a higher one.

Usage: check-layers.py --stages BUILD/stages.txt --src SRC --lib-dir BUILD
       check-layers.py --self-test
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

TEST_FILE = re.compile(r"(_test|_slowtest|_fuzz)\.cc$|test_util\.h$")
NM_ROW = re.compile(r"^.*?:([^:/]+\.o):\s*(?:[0-9a-f]+)?\s+(\w)\s+(.*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/([^"]+)"')


def read_stages(path):
    stages = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            name, _, deps = line.partition(":")
            stages[name.strip()] = deps.split()
    return stages


def closure(stages, name):
    seen, todo = set(), list(stages.get(name, []))
    while todo:
        s = todo.pop()
        if s not in seen:
            seen.add(s)
            todo.extend(stages.get(s, []))
    return seen


def check_declarations(stages):
    errors = []
    for name, deps in sorted(stages.items()):
        for d in deps:
            if d not in stages:
                errors.append("stage %s names %s, which is no stage" % (name, d))
        if name in closure(stages, name):
            errors.append("stage %s builds on itself through %s" %
                          (name, " ".join(sorted(deps))))
    return errors


def check_includes(stages, src):
    errors = []
    for folder in sorted(os.listdir(src)):
        if not os.path.isdir(os.path.join(src, folder)):
            continue
        if folder not in stages:
            errors.append("src/%s/ is no stage: declare it with shoal_stage() "
                          "in CMakeLists.txt" % folder)
            continue
        allowed = set(stages[folder]) | {folder}
        below = closure(stages, folder) | {folder}
        for root, _, files in os.walk(os.path.join(src, folder)):
            for f in sorted(files):
                if not f.endswith((".cc", ".h")):
                    continue
                test = TEST_FILE.search(f) is not None
                path = os.path.join(root, f)
                rel = os.path.relpath(path, os.path.dirname(src))
                with open(path, errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) not in stages:
                            continue
                        if test and m.group(1) not in below:
                            errors.append(
                                "%s:%d includes %s/%s, but stage %s does not "
                                "build on %s: a test of it uses only the "
                                "stages below it (move an integration test "
                                "up to the highest stage it tests)" %
                                (rel, n, m.group(1), m.group(2), folder,
                                 m.group(1)))
                        elif not test and m.group(1) not in allowed:
                            errors.append(
                                "%s:%d includes %s/%s, but stage %s builds "
                                "only on: %s" %
                                (rel, n, m.group(1), m.group(2), folder,
                                 " ".join(stages[folder]) or "nothing"))
    return errors


def nm(archive, *flags):
    out = subprocess.run(["nm", "-A", "-C"] + list(flags) + [archive],
                         check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        # "lib.a:member.o:0000000000000000 T symbol" or, undefined,
        # "lib.a:member.o:                 U symbol"
        m = NM_ROW.match(line)
        if m:
            rows.append((m.group(1), m.group(2), m.group(3)))
    return rows


def check_symbols(stages, lib_dir):
    errors = []
    defined = {}  # strong definition -> (stage, object)
    undefined = {}
    for name in stages:
        archive = os.path.join(lib_dir, "libshoal_%s.a" % name)
        if not os.path.exists(archive):
            errors.append("%s is missing: build first" % archive)
            continue
        for member, kind, sym in nm(archive, "--defined-only"):
            # Weak definitions (inline functions, templates, vtables) are
            # made wherever they are used; only strong ones locate a stage.
            if kind in "TDBRG" and kind.isupper():
                defined.setdefault(sym, (name, member))
        undefined[name] = [(m, s) for m, k, s in nm(archive, "-u")]
    for name, rows in sorted(undefined.items()):
        below = closure(stages, name) | {name}
        reported = set()
        for member, sym in rows:
            if sym not in defined:
                continue
            stage, obj = defined[sym]
            if stage in below or (member, stage) in reported:
                continue
            reported.add((member, stage))
            errors.append("%s (stage %s) calls %s, defined in %s of stage %s, "
                          "which %s does not build on" %
                          (member, name, sym, obj, stage, name))
    return errors


def run(stages_path, src, lib_dir):
    stages = read_stages(stages_path)
    errors = check_declarations(stages) + check_includes(stages, src)
    if lib_dir:
        errors += check_symbols(stages, lib_dir)
    for e in errors:
        print(e)
    if errors:
        print("%d includes or calls run back up the layers (tests included)" %
              len(errors))
    else:
        print("%d stages; every include and call goes down the layers, "
              "tests included" % len(stages))
    return 1 if errors else 0


def self_test():
    """A two-stage tree with a back-edge, by include and by call: both
    checks must fail on it and pass once it is gone."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        for s in ("low", "high"):
            os.makedirs(os.path.join(src, s))
        stages_path = os.path.join(d, "stages.txt")
        with open(stages_path, "w") as f:
            f.write("low:\nhigh: low\n")

        def write(rel, text):
            with open(os.path.join(src, rel), "w") as f:
                f.write(text)

        write("high/h.h", "int High();\n")
        write("high/h.cc", '#include "low/l.h"\nint High() { return Low(); }\n')
        write("low/l.h", "int Low();\n")
        write("low/l.cc", "int High();\nint Low() { return High(); }\n")
        for s in ("low", "high"):
            obj = os.path.join(d, s + ".o")
            subprocess.run(["c++", "-c", os.path.join(src, s, s[0] + ".cc"),
                            "-I", src, "-o", obj], check=True)
            subprocess.run(["ar", "rc", os.path.join(d, "libshoal_%s.a" % s),
                            obj], check=True)
        failures = []
        if not check_symbols(read_stages(stages_path), d):
            failures.append("a call from low to high was not caught")
        write("low/l.cc", '#include "high/h.h"\nint Low() { return 1; }\n')
        if not check_includes(read_stages(stages_path), src):
            failures.append("an include of high from low was not caught")
        write("low/l.cc", "int Low() { return 1; }\n")
        if check_includes(read_stages(stages_path), src):
            failures.append("a clean tree failed the include check")
        # Tests obey the layering too: one below may not use a stage above.
        write("low/l_test.cc", '#include "high/h.h"\n')
        if not check_includes(read_stages(stages_path), src):
            failures.append("an include of high from a test of low was not "
                            "caught")
        os.remove(os.path.join(src, "low", "l_test.cc"))
        write("high/h_test.cc", '#include "low/l.h"\n')
        if check_includes(read_stages(stages_path), src):
            failures.append("a test of high was refused the stage below it")
        with open(stages_path, "w") as f:
            f.write("low: high\nhigh: low\n")
        if not check_declarations(read_stages(stages_path)):
            failures.append("a cycle of declarations was not caught")
        for f in failures:
            print("self-test:", f)
        if not failures:
            print("self-test: back-edges by include (tests included), call "
                  "and declaration are caught")
        return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stages")
    ap.add_argument("--src")
    ap.add_argument("--lib-dir")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.stages or not a.src:
        ap.error("--stages and --src are needed")
    return run(a.stages, a.src, a.lib_dir)


if __name__ == "__main__":
    sys.exit(main())
