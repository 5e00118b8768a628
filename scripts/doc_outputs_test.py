#!/usr/bin/env python3
"""Every output README.md and docs/ show is checked or says why not: each
plain fenced block is a command's synopsis (`shoal infer MODEL ...`), a
figure (`<!-- figure -->`: a diagram, formulas, a tree), a command for a
board (`<!-- by hand: WHY -->`), or an output
marked for scripts/run-doc-examples.py (`<!-- output: COMMAND -->`,
`<!-- output: above -->` right after an example, `<!-- output by hand:
WHY -->`). BENCHMARKS.md is left out: its scripts write it whole. Also
tests the comparison run-doc-examples.py makes: numbers and hashes
masked, lines in order, `...` for lines left out."""
import glob
import importlib.util
import os
import re
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
spec = importlib.util.spec_from_file_location(
    "run_doc_examples", os.path.join(HERE, "run-doc-examples.py"))
rde = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rde)

FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```\n?", re.S | re.M)
SYNOPSIS = re.compile(r"^(shoal|shoal-worker) [a-z][a-z-]*( |$)")
MARK = re.compile(r"<!-- (output(?: by hand)?:.*?|by hand:.*?|figure) -->[ \t]*\n$")


def documents():
    docs = [os.path.join(ROOT, "README.md")]
    docs += [d for d in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
             if not d.endswith("BENCHMARKS.md")]
    return docs


def plain_blocks(text):
    """(line, language, body, what precedes the fence) of every block."""
    for m in FENCE.finditer(text):
        yield (text[: m.start()].count("\n") + 1, m.group(1), m.group(2),
               text[: m.start()])


class DocOutputs(unittest.TestCase):
    def test_every_shown_output_is_marked(self):
        unmarked = []
        for doc in documents():
            text = open(doc, encoding="utf-8").read()
            for line, lang, body, before in plain_blocks(text):
                if lang in ("sh", "bash", "yaml", "json", "python", "c",
                            "cpp", "ini", "toml", "dot", "mermaid"):
                    continue
                if SYNOPSIS.match(body) or MARK.search(before):
                    continue
                first = body.split("\n")[0][:70]
                unmarked.append(f"{os.path.relpath(doc, ROOT)}:{line}: "
                                f"{first}")
        self.assertEqual(unmarked, [], "blocks that show output but say "
                         "neither how it is checked nor why not:\n" +
                         "\n".join(unmarked))

    def test_above_follows_an_example(self):
        wrong = []
        for doc in documents():
            text = open(doc, encoding="utf-8").read()
            prev = None
            for line, lang, body, before in plain_blocks(text):
                if before.rstrip().endswith("<!-- output: above -->"):
                    runs = prev is not None and prev[0] in ("sh", "bash") \
                        and "build/shoal" in prev[1]
                    if not runs:
                        wrong.append(f"{os.path.relpath(doc, ROOT)}:{line}")
                prev = (lang, body)
        self.assertEqual(wrong, [], "`output: above` not right after an "
                         "example that runs build/shoal")

    def test_markers_parse(self):
        # Every marker is followed by its block and read by the runner.
        for doc in documents():
            text = open(doc, encoding="utf-8").read()
            marks = len(re.findall(r"^<!-- output(?: by hand)?:", text, re.M))
            self.assertEqual(marks, len(rde.outputs(doc)),
                             os.path.relpath(doc, ROOT))


class Comparison(unittest.TestCase):
    def test_numbers_and_hashes_do_not_matter(self):
        shown = ["pi0   1.00x   853 ms  sha 4a69cfc371b0",
                 "...",
                 "deployed to 2 workers in 8.43 ms"]
        printed = ["header", "pi0 1.23x 1853 ms  sha 77be01aa99c2",
                   "other", "deployed to 3 workers in 10.1 ms"]
        self.assertIsNone(rde.missing_line(shown, printed))

    def test_words_and_order_do(self):
        printed = ["deployed to 3 workers", "pi0 1.23x"]
        self.assertEqual(rde.missing_line(["pi0 1.00x", "deployed to 2 "
                                           "workers"], printed),
                         "deployed to 2 workers")
        self.assertEqual(rde.missing_line(["largest value 3"],
                                          ["top class 3"]),
                         "largest value 3")


    def test_elisions_inside_a_line(self):
        printed = ["revoked pi1's certificate (serial 4a1f): crl.pem lists 1",
                   "good until 2026-11-29 11:00:00 UTC"]
        self.assertIsNone(rde.missing_line(
            ["revoked pi1's certificate (serial ...): crl.pem lists 1",
             "good until <now + 30 min> UTC"], printed))
        self.assertEqual(rde.missing_line(["revoked pi1's key ..."], printed),
                         "revoked pi1's key ...")

    def test_comments_after_a_command_are_its_output(self):
        block = ("build/shoal plan x \\\n    --y\n# chose lop\n#   why\n\n"
                 "# a note before a command\nbuild/shoal run\n# ran\n")
        self.assertEqual(rde.shown_in_block(block),
                         ["chose lop", "  why", "ran"])


if __name__ == "__main__":
    unittest.main()
