// What a prediction from a cluster file's specs alone is worth, for the
// commands that print one (`plan`, `simulate`): without a profile the
// devices' speeds are guesses, and measured latencies have been well above
// such predictions, so the figure is printed beside them.
#ifndef SHOAL_CLI_PREDICTION_NOTE_H_
#define SHOAL_CLI_PREDICTION_NOTE_H_

namespace shoal {

// What `simulate` names as the source of a prediction without a profile.
inline constexpr const char kSpecSource[] = "cluster specs";

// The figures are docs/BENCHMARKS.md's: its YOLOv2 and energy tables put
// spec-only predictions beside `shoal bench` (38 pairs, measured / predicted
// 1.07 to 3.11, median 1.38); its "Predicted against measured" sections
// give the error from a profile. Update both with those sections.
inline constexpr const char kSpecPredictionNote[] =
    "note: predicted from the cluster's specs, not a profile: measured "
    "latencies\n"
    "  have been 1.07 to 3.1 times such predictions (median 1.38; "
    "docs/BENCHMARKS.md,\n"
    "  \"YOLOv2\" and \"Energy per inference\"); from a profile (shoal "
    "profile, then\n"
    "  --profile) they were 6.0 % off, median (\"Predicted against measured "
    "on eight\n"
    "  Pi 3B+ boards\")\n";

}  // namespace shoal

#endif  // SHOAL_CLI_PREDICTION_NOTE_H_
