#!/usr/bin/env python3
"""The notes `plan` and `simulate` print beside a prediction made from a
cluster file alone (src/cli/prediction_note.h), computed from
docs/BENCHMARKS.md: how far measured latencies have been from such
predictions, and how far off predictions from a profile were ("Predicted
against measured on eight Pi 3B+ boards"). Two notes: one for clusters of
board classes priced by their rates and emulated in board time (the
"Predicted against measured" sections' "specs / bench" column), one for
the rest, whose speeds are guesses (the YOLOv2 and energy sections put
`shoal simulate` from specs beside `shoal bench`).

  python3 scripts/prediction-note.py --check   # the header says what BENCHMARKS does (test PredictionNote)
  python3 scripts/prediction-note.py --write   # rewrite the header (bench/run_all.sh does, after a section)
"""
import argparse
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")
HEADER = os.path.join(ROOT, "src", "cli", "prediction_note.h")

# The sections whose tables hold spec-only predictions beside measurements,
# by their markers, and the one whose median error is from a profile.
SPEC_SECTIONS = {"yolov2": "YOLOv2", "energy": "Energy per inference"}
PROFILE_SECTION = ("simulate-vs-bench-pi3-8",
                   "Predicted against measured on eight Pi 3B+ boards")
# The sections that bench board classes beside `shoal simulate` from the
# cluster file alone ("specs / bench").
BOARD_SECTIONS = ("simulate-vs-bench-pi3-8", "simulate-vs-bench-pi4-4")


def section(doc, name):
    m = re.search(r"<!-- %s:begin -->(.*?)<!-- %s:end -->" % (name, name),
                  doc, re.S)
    if not m:
        sys.exit(f"docs/BENCHMARKS.md has no section {name}")
    return m.group(1)


def pairs(text):
    """(predicted, measured) from every table row: each column named
    'X predicted' (or 'predicted ms') with a 'X measured' beside it."""
    out = []
    rows = [l for l in text.split("\n") if l.startswith("|")]
    header = None
    for l in rows:
        cells = [c.strip() for c in l.strip("|").split("|")]
        if header is None or set(l) <= set("|-: "):
            if not set(l) <= set("|-: "):
                header = cells
            continue
        if len(cells) != len(header):
            header = cells
            continue
        for i, h in enumerate(header):
            # Latencies only: not the energy (J) computed from them.
            if "predicted" not in h or "J/" in h:
                continue
            want = h.replace("predicted", "measured")
            if want not in header:
                continue
            j = header.index(want)
            try:
                p, m = float(cells[i]), float(cells[j])
            except ValueError:
                continue
            if p > 0 and m > 0:
                out.append((p, m))
    return out


def column(text, name):
    """Every number in the table column headed `name`."""
    out, header = [], None
    for l in text.split("\n"):
        if not l.startswith("|") or set(l) <= set("|-: "):
            continue
        cells = [c.strip() for c in l.strip("|").split("|")]
        if header is None or name in cells:
            header = cells
            continue
        if name in header and len(cells) == len(header):
            try:
                out.append(float(cells[header.index(name)]))
            except ValueError:
                pass
    return out


def figures():
    doc = open(DOC, encoding="utf-8").read()
    boards = []
    for name in BOARD_SECTIONS:
        boards += [1 / r for r in column(section(doc, name), "specs / bench") if r > 0]
    if not boards:
        sys.exit("no 'specs / bench' figures in the sections " + ", ".join(BOARD_SECTIONS))
    ratios = []
    for name in SPEC_SECTIONS:
        ratios += [m / p for p, m in pairs(section(doc, name))]
    if not ratios:
        sys.exit("no predicted / measured pairs in the YOLOv2 and energy sections")
    prof = re.search(r"Median error: ([0-9.]+) %", section(doc, PROFILE_SECTION[0]))
    if not prof:
        sys.exit(f"section {PROFILE_SECTION[0]} gives no median error")
    return (len(ratios), min(ratios), max(ratios), statistics.median(ratios),
            float(prof.group(1)), len(boards), min(boards), max(boards),
            statistics.median(boards))


def c_note(note):
    """The note as C string pieces, a line of it at a time."""
    lines = note.split("\n")[:-1]
    def c_string(l):
        return l.replace("\\", "\\\\").replace('"', '\\"')
    # Each line of the note as C string pieces that fit 80 columns, broken
    # after a space as clang-format would break them (so it leaves the
    # header as written).
    def pieces(l):
        body = l.lstrip(" ")
        words = body.split(" ")
        out, cur = [], l[:len(l) - len(body)] + words[0]
        for w in words[1:]:
            nxt = cur + " " + w
            if cur and len(f'    "{c_string(nxt)} \\n"') > 80:
                out.append(cur + " ")
                cur = w
            else:
                cur = nxt
        return out + [cur + "\n"]
    return "\n".join(f'    "{c_string(p)}"'.replace("\n\"", "\\n\"")
                      for l in lines for p in pieces(l))


def header(n, lo, hi, med, prof, bn, blo, bhi, bmed):
    note = (f"note: predicted from the cluster's specs, not a profile: measured latencies\n"
            f"  have been {lo:.2f} to {hi:.1f} times such predictions (median {med:.2f}; docs/BENCHMARKS.md,\n"
            f"  \"YOLOv2\" and \"Energy per inference\"); from a profile (shoal profile, then\n"
            f"  --profile) they were {prof:.1f} % off, median (\"Predicted against measured on eight\n"
            f"  Pi 3B+ boards\")\n")
    board = (f"note: predicted from the board classes' rates (docs/cluster-format.md), not a\n"
             f"  profile: emulated boards, which run to those rates, measured {blo:.2f} to {bhi:.2f}\n"
             f"  times such predictions (median {bmed:.2f} over {bn} plans; docs/BENCHMARKS.md,\n"
             f"  \"Predicted against measured on eight Pi 3B+ boards\" and \"... on four Pi 4B\n"
             f"  boards\"); a real board runs as its engine does: shoal profile it, then\n"
             f"  --profile\n")
    return f'''// What a prediction from a cluster file alone is worth, for the commands
// that print one (`plan`, `simulate`), printed beside it. On board classes
// emulated in board time, the boards run to the rates the prediction
// prices; elsewhere the devices' speeds are guesses, and measured
// latencies have been well above such predictions.
//
// Written by scripts/prediction-note.py from docs/BENCHMARKS.md (its
// "Predicted against measured" sections on boards give "specs / bench":
// {bn} plans, and the error from a profile; its YOLOv2 and energy tables put
// spec-only predictions beside `shoal bench`: {n} pairs); the test
// PredictionNote fails when they differ.
#ifndef SHOAL_CLI_PREDICTION_NOTE_H_
#define SHOAL_CLI_PREDICTION_NOTE_H_

namespace shoal {{

// What `simulate` names as the source of a prediction without a profile:
// a cluster of board classes all priced by their rates, or any other.
inline constexpr const char kBoardSource[] = "the board classes' rates";
inline constexpr const char kSpecSource[] = "cluster specs";

inline constexpr const char kBoardPredictionNote[] =
{c_note(board)};

inline constexpr const char kSpecPredictionNote[] =
{c_note(note)};

}}  // namespace shoal

#endif  // SHOAL_CLI_PREDICTION_NOTE_H_
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true")
    g.add_argument("--write", action="store_true")
    a = ap.parse_args()
    want = header(*figures())
    have = open(HEADER, encoding="utf-8").read()
    if a.write:
        if have != want:
            open(HEADER, "w", encoding="utf-8").write(want)
            print("wrote src/cli/prediction_note.h", file=sys.stderr)
        return 0
    if have != want:
        print("src/cli/prediction_note.h does not say what docs/BENCHMARKS.md "
              "does: run python3 scripts/prediction-note.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
