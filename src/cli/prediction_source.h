// Where a prediction made without a profile comes from, and the note
// printed beside it (prediction_note.h): a cluster whose every device is a
// board class priced by its rates is emulated to those rates, and its
// predictions have been close to what the emulated boards measured; any
// other cluster's speeds are guesses.
#ifndef SHOAL_CLI_PREDICTION_SOURCE_H_
#define SHOAL_CLI_PREDICTION_SOURCE_H_

#include <algorithm>
#include <string_view>

#include "cli/prediction_note.h"
#include "cluster/cluster.h"

namespace shoal {

inline const char* SpecSourceOf(const Cluster& c) {
  const bool boards =
      !c.devices.empty() &&
      std::all_of(c.devices.begin(), c.devices.end(),
                  [](const DeviceSpec& d) { return d.OnBoardRates(); });
  return boards ? kBoardSource : kSpecSource;
}

// nullptr for a prediction from a profile.
inline const char* SpecNoteOf(std::string_view source) {
  if (source == kBoardSource) return kBoardPredictionNote;
  if (source == kSpecSource) return kSpecPredictionNote;
  return nullptr;
}

}  // namespace shoal

#endif  // SHOAL_CLI_PREDICTION_SOURCE_H_
