#include "graph/shape.h"

#include <cctype>

namespace shoal {

std::string ShapeToString(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += "x";
    out += std::to_string(s[i]);
  }
  return out;
}

bool ParseShape(const std::string& text, Shape* out) {
  out->clear();
  int64_t cur = 0;
  bool have = false;
  bool spaced = false;  // a space ended the digits: "1 2" is not 12
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (spaced) return false;
      cur = cur * 10 + (c - '0');
      have = true;
      if (cur > (int64_t{1} << 40)) return false;
    } else if (c == ',' || c == 'x') {
      if (!have || cur == 0) return false;
      out->push_back(cur);
      cur = 0;
      have = false;
      spaced = false;
    } else if (c == ' ') {
      spaced = have;
    } else {
      return false;
    }
  }
  if (!have || cur == 0) return false;
  out->push_back(cur);
  return true;
}

}  // namespace shoal
