// Sizes in the units people read: one formatter for every message, table
// and picture, so that the same bytes read the same everywhere.
#ifndef SHOAL_UTIL_UNITS_H_
#define SHOAL_UTIL_UNITS_H_

#include <cstdint>
#include <string>

namespace shoal {

// "12.3 MiB", whatever the size: for messages that compare sizes (a
// device's need against its budget), where one unit reads best.
std::string MiB(int64_t bytes);

// "512 B", "1.5 KiB", "12.3 MiB", "1.20 GiB": the largest unit under the
// size, for tables and labels.
std::string HumanBytes(int64_t bytes);

}  // namespace shoal

#endif  // SHOAL_UTIL_UNITS_H_
