#!/usr/bin/env python3
"""The system calls a traced program made that a unit's SystemCallFilter
does not allow, for serve_package_test.sh.

  syscalls_outside_filter.py GROUPS CALLS FILTER BINARY

GROUPS: `systemd-analyze syscall-filter`'s output (each @group's calls);
CALLS: `strace -f -o` of the program; FILTER: the unit's SystemCallFilter
value; BINARY: the path whose execve starts the program's own calls
(strace's setup before it is not the program's). Prints the calls outside
the filter, space-separated (nothing: all allowed), or a note when there
were no groups or too few calls to judge.
"""

import re
import sys


def main(groups_file, calls_file, filter_value, binary):
    groups, cur = {}, None
    for line in open(groups_file):
        if re.match(r"^@[\w-]+$", line.rstrip()):
            cur = line.strip()
            groups[cur] = []
        elif cur and line.strip() and not line.strip().startswith("#"):
            groups[cur].append(line.strip())

    def expand(name, seen):
        out = set()
        for x in groups.get(name, []):
            if x.startswith("@"):
                if x not in seen:
                    seen.add(x)
                    out |= expand(x, seen)
            else:
                out.add(x)
        return out

    allowed = set()
    for f in filter_value.split():
        allowed |= expand(f, set()) if f.startswith("@") else {f}
    used = set()
    seen_exec = False
    for line in open(calls_file):
        m = re.match(r"^\d+ +(\w+)\(", line)
        if not m:
            continue
        if m.group(1) == "execve" and binary in line:
            seen_exec = True
        if seen_exec:
            used.add(m.group(1))
    if not allowed or len(used) < 20:
        print("(no filter groups or no calls traced)")
    print(" ".join(sorted(used - allowed)))


if __name__ == "__main__":
    main(*sys.argv[1:5])
