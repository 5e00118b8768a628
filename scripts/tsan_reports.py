#!/usr/bin/env python3
"""Sorts ThreadSanitizer reports into shoal's races and the libraries'.

Debian's gRPC, abseil and protobuf are not built with ThreadSanitizer, so
TSan cannot see the locks and atomics inside them: a message gRPC hands from
one of its threads to another, or memory its allocator reuses, looks like a
race, thousands of times per cluster test (docs/testing.md). A suppression
file cannot sort these out: TSan's `race:` patterns match any frame of
either stack, and every RPC handler of shoal runs under gRPC's frames, so a
pattern wide enough to hide the libraries' reports hides shoal's own races
in its handlers too.

This script decides per access instead. For each of the two accesses of a
report it skips TSan's interceptors and the C++ standard library's inline
code and looks at the first frame left: the access is the library's when
that frame is in a prebuilt library (libgrpc, libgpr, libabsl, libprotobuf,
...), in gRPC's, protobuf's or abseil's headers, or in protobuf's generated
code; otherwise it is shoal's. A report whose accesses are all shoal's is a
race in shoal, and the run fails; the others are counted and kept. So is a
report with an access inside a pthreadpool loop (XNNPACK's thread pool runs
shoal's callbacks too): the pool's fork and join, which order it against
the code before and after the loop, are in the uninstrumented
libpthreadpool.

  scripts/tsan_reports.py LOG_OR_DIR...   # exit 1 if shoal has a race
"""
import os
import re
import sys

LIBRARY_FILES = ("/usr/include/grpc", "/usr/include/google/",
                 "/usr/include/absl/", ".pb.h", ".pb.cc")
LIBRARY_FUNCTIONS = ("grpc", "gpr_", "absl::", "google::protobuf::",
                     "std::_Function_handler<grpc", "<null>")
LIBRARY_TYPES = re.compile(r"grpc_core::|grpc::|absl::|google::protobuf::")
SHOAL_MODULES = re.compile(r"^(shoal|shoal_tests|shoal_slow_tests|shoal-worker"
                           r"|fuzz_\w+|shoal_\w+)$")
FRAME = re.compile(r"#\d+ (?P<func>.*?) (?P<file>\S+) \((?P<module>[^+)]+)")


def access_owner(frames):
    """'shoal', 'library' or None (no frame) for one access's stack."""
    for line in frames:
        m = FRAME.search(line)
        if not m:
            continue
        func, path = m.group("func"), m.group("file")
        module = os.path.basename(m.group("module"))
        if module.startswith("libtsan") or "/libsanitizer/" in path:
            continue  # the interceptor: what called it decides
        if path.startswith("/usr/include/c++/") or func.startswith("std::"):
            # Inline standard library: what called it decides, unless it
            # is instantiated on the libraries' types (a shared_ptr of
            # gRPC's channel arguments freeing them).
            if LIBRARY_TYPES.search(func):
                return "library"
            continue
        if not SHOAL_MODULES.match(module):
            return "library"  # a prebuilt shared library
        if any(k in path for k in LIBRARY_FILES):
            return "library"
        if func.startswith(LIBRARY_FUNCTIONS) or path == "<null>":
            return "library"
        return "shoal"
    return None


def on_pool_worker(frames):
    """Whether the access ran inside a pthreadpool loop, on a worker or on
    the thread that called it: a frame of libpthreadpool below it."""
    for line in frames:
        m = FRAME.search(line)
        if m and os.path.basename(m.group("module")).startswith("libpthreadpool"):
            return True
    return False


ACCESS = re.compile(r"^  (Previous )?(atomic )?(read|write) of size",
                    re.IGNORECASE)


def reports(text):
    """Each report: (title, [the stack lines of each memory access])."""
    for block in text.split("WARNING: ThreadSanitizer:")[1:]:
        block = block.split("\n==================")[0]
        title = block.split("\n", 1)[0].strip()
        stacks = []
        # Sections are separated by blank lines; an access's section is its
        # header line ("Write of size 8 at ... by thread T2:") and frames.
        for section in block.split("\n\n"):
            lines = section.split("\n")
            for k, line in enumerate(lines):
                if ACCESS.match(line):
                    stacks.append([l for l in lines[k + 1:] if FRAME.search(l)])
                    break
        yield title, stacks


def main(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += [os.path.join(p, f) for f in sorted(os.listdir(p))]
        else:
            files.append(p)
    total = library = pool = 0
    shoal = []
    for f in files:
        with open(f, errors="replace") as fh:
            text = fh.read()
        for title, stacks in reports(text):
            total += 1
            # A report without two stacks of shoal's (a race whose previous
            # access TSan no longer remembers, a lock inversion, ...) is
            # shoal's when every stack it has is shoal's.
            owners = [access_owner(s) for s in stacks]
            pooled = [on_pool_worker(s) for s in stacks]
            if not stacks or "library" in owners or None in owners:
                library += 1
            elif any(pooled):
                # An access inside a pthreadpool loop (XNNPACK's thread pool
                # runs shoal's own callbacks too, on its workers and on the
                # thread that called it): what orders it against the
                # access before or after the loop is the pool's fork and
                # join, inside the uninstrumented libpthreadpool. The loops'
                # tasks write disjoint blocks (each kernel is checked
                # against the reference), which TSan cannot tell apart
                # from the loop before or after.
                pool += 1
            else:
                shoal.append((f, title, stacks))
    print("%d ThreadSanitizer reports: %d with an access inside the "
          "uninstrumented libraries, %d in pthreadpool's loops, %d in shoal"
          % (total, library, pool, len(shoal)))
    for f, title, stacks in shoal[:20]:
        print("\n%s: %s" % (f, title))
        for s in stacks:
            print("\n".join(s[:8]))
            print()
    return 1 if shoal else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
