#!/usr/bin/env python3
"""Checks a `shoal serve --log-format json` log, for serve_package_test.sh.

  serve_log_check.py LOG          every line a JSON object with ts (UTC,
                                  milliseconds), level and msg; the last
                                  one serve's stop after answering one
                                  request. Exit 1 naming the bad line.
  serve_log_check.py --port LOG   prints the port of the "listening on"
                                  line, if it is there yet.
"""

import json
import re
import sys

TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def main(argv):
    if argv[1] == "--port":
        for line in open(argv[2]):
            try:
                j = json.loads(line)
            except ValueError:
                continue  # a line still being written
            if j.get("msg", "").startswith("listening on"):
                print(j["port"])
        return 0
    lines = open(argv[1]).read().splitlines()
    if len(lines) < 3:
        print("only %d lines" % len(lines))
        return 1
    for line in lines:
        try:
            j = json.loads(line)
        except ValueError as e:
            print("not JSON (%s): %s" % (e, line))
            return 1
        if not (TS.fullmatch(j.get("ts", "")) and
                j.get("level") in ("INFO", "WARN", "ERROR") and j.get("msg")):
            print("no ts, level or msg: " + line)
            return 1
    last = json.loads(lines[-1])
    if not last["msg"].startswith("stopped: 1 requests accepted, 1 answered"):
        print("the last line is not the stop: " + lines[-1])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
