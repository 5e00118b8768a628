// Sizes, counts and times in the units people read: one formatter for each,
// for every message, table and picture, so that the same quantity reads the
// same everywhere. Files for programs (JSON, YAML, plans) keep exact numbers.
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

// "512", "23.3 k", "61.1 M", "1.81 G": parameters, MACs, elements, to three
// significant digits (SI prefixes: these are counts, not bytes).
std::string HumanCount(int64_t n);

// "500 kbit/s", "62.24 Mbit/s", "1 Gbit/s": a link's rate, from bits per
// second (SI prefixes, as links are sold), to four significant digits.
std::string HumanBitRate(double bits_per_s);

// "1.8 %", "62.5 %": a fraction as a percentage.
std::string Percent(double fraction);

// "1 device", "4 devices": a count and its noun, plural when it is not one
// (nouns that take an "s").
std::string Plural(int64_t n, const std::string& noun);

// "25.0 us", "0.42 ms", "524.7 ms", "10.49 s", "3 min 20 s": a duration given
// in milliseconds, in the unit that keeps it short.
std::string HumanMs(double ms);

}  // namespace shoal

#endif  // SHOAL_UTIL_UNITS_H_
