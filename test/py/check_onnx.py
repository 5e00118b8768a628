#!/usr/bin/env python3
"""Runs onnx.checker.check_model (with full_check: ONNX's own shape
inference must agree with the declared shapes) on each file given.

Usage: check_onnx.py FILE.onnx...   Prints one line per file; exits 1 if any
fails, 77 when onnx cannot be imported (the caller may skip).
"""
import sys

try:
    import onnx
except ImportError as e:  # pragma: no cover
    print("check_onnx: %s" % e, file=sys.stderr)
    sys.exit(77)


def main():
    failed = 0
    for path in sys.argv[1:]:
        try:
            onnx.checker.check_model(onnx.load(path), full_check=True)
            print("ok %s" % path)
        except Exception as e:  # the checker raises several kinds
            print("FAIL %s: %s" % (path, e))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
