#include "metrics/http_route.h"

#include <vector>

namespace shoal {

namespace {

std::vector<std::string_view> Segments(std::string_view p) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= p.size()) {
    const size_t j = std::min(p.find('/', i), p.size());
    out.push_back(p.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace

bool MatchPath(std::string_view pattern, std::string_view path,
               std::map<std::string, std::string>* params) {
  const auto want = Segments(pattern);
  const auto got = Segments(path);
  if (want.size() != got.size()) return false;
  std::map<std::string, std::string> found;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string_view w = want[i];
    if (w.size() >= 2 && w.front() == '{' && w.back() == '}') {
      if (got[i].empty()) return false;
      found[std::string(w.substr(1, w.size() - 2))] = std::string(got[i]);
    } else if (w != got[i]) {
      return false;
    }
  }
  if (params != nullptr) *params = std::move(found);
  return true;
}

}  // namespace shoal
