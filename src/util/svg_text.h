// Text for SVG pictures written directly (plan/timeline_svg,
// plan/plan_svg): escaped strings, coordinates, byte counts for labels.
#ifndef SHOAL_UTIL_SVG_TEXT_H_
#define SHOAL_UTIL_SVG_TEXT_H_

#include <cstdint>
#include <string>

namespace shoal {

// `s` safe inside an SVG text node or attribute: markup characters
// escaped, control bytes (not allowed in XML 1.0) dropped.
std::string SvgEscape(const std::string& s);
// A coordinate with one decimal: "12.5".
std::string SvgNum(double v);

}  // namespace shoal

#endif  // SHOAL_UTIL_SVG_TEXT_H_
