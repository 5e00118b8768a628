// What a prediction from a cluster file's specs alone is worth, for the
// commands that print one (`plan`, `simulate`): without a profile the
// devices' speeds are guesses, and measured latencies have been well above
// such predictions, so the figure is printed beside them.
//
// Written by scripts/prediction-note.py from docs/BENCHMARKS.md (its
// YOLOv2 and energy tables put spec-only predictions beside `shoal bench`:
// 47 pairs; its "Predicted against measured" section gives the error from
// a profile); the test PredictionNote fails when they differ.
#ifndef SHOAL_CLI_PREDICTION_NOTE_H_
#define SHOAL_CLI_PREDICTION_NOTE_H_

namespace shoal {

// What `simulate` names as the source of a prediction without a profile.
inline constexpr const char kSpecSource[] = "cluster specs";

inline constexpr const char kSpecPredictionNote[] =
    "note: predicted from the cluster's specs, not a profile: measured "
    "latencies\n"
    "  have been 1.02 to 2.9 times such predictions (median 1.29; "
    "docs/BENCHMARKS.md,\n"
    "  \"YOLOv2\" and \"Energy per inference\"); from a profile (shoal "
    "profile, then\n"
    "  --profile) they were 6.0 % off, median (\"Predicted against measured "
    "on eight\n"
    "  Pi 3B+ boards\")\n";

}  // namespace shoal

#endif  // SHOAL_CLI_PREDICTION_NOTE_H_
