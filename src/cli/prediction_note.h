// What a prediction from a cluster file alone is worth, for the commands
// that print one (`plan`, `simulate`), printed beside it. On board classes
// emulated in board time, the boards run to the rates the prediction
// prices; elsewhere the devices' speeds are guesses, and measured
// latencies have been well above such predictions.
//
// Written by scripts/prediction-note.py from docs/BENCHMARKS.md (its
// "Predicted against measured" sections on boards give "specs / bench":
// 21 plans, and the error from a profile; its YOLOv2 and energy tables put
// spec-only predictions beside `shoal bench`: 47 pairs); the test
// PredictionNote fails when they differ.
#ifndef SHOAL_CLI_PREDICTION_NOTE_H_
#define SHOAL_CLI_PREDICTION_NOTE_H_

namespace shoal {

// What `simulate` names as the source of a prediction without a profile:
// a cluster of board classes all priced by their rates, or any other.
inline constexpr const char kBoardSource[] = "the board classes' rates";
inline constexpr const char kSpecSource[] = "cluster specs";

inline constexpr const char kBoardPredictionNote[] =
    "note: predicted from the board classes' rates (docs/cluster-format.md), "
    "not a\n"
    "  profile: emulated boards, which run to those rates, measured 0.99 to "
    "2.56\n"
    "  times such predictions (median 1.03 over 21 plans; "
    "docs/BENCHMARKS.md,\n"
    "  \"Predicted against measured on eight Pi 3B+ boards\" and \"... on "
    "four Pi 4B\n"
    "  boards\"); a real board runs as its engine does: shoal profile it, "
    "then\n"
    "  --profile\n";

inline constexpr const char kSpecPredictionNote[] =
    "note: predicted from the cluster's specs, not a profile: measured "
    "latencies\n"
    "  have been 1.02 to 2.9 times such predictions (median 1.29; "
    "docs/BENCHMARKS.md,\n"
    "  \"YOLOv2\" and \"Energy per inference\"); from a profile (shoal "
    "profile, then\n"
    "  --profile) they were 5.0 % off, median (\"Predicted against measured "
    "on eight\n"
    "  Pi 3B+ boards\")\n";

}  // namespace shoal

#endif  // SHOAL_CLI_PREDICTION_NOTE_H_
