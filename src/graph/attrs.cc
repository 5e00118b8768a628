#include "graph/attrs.h"

#include <sstream>

namespace shoal {

int64_t Attrs::GetInt(const std::string& k, int64_t def) const {
  auto it = map_.find(k);
  if (it == map_.end()) return def;
  if (auto* p = std::get_if<int64_t>(&it->second)) return *p;
  if (auto* p = std::get_if<float>(&it->second)) return static_cast<int64_t>(*p);
  return def;
}

float Attrs::GetFloat(const std::string& k, float def) const {
  auto it = map_.find(k);
  if (it == map_.end()) return def;
  if (auto* p = std::get_if<float>(&it->second)) return *p;
  if (auto* p = std::get_if<int64_t>(&it->second)) return static_cast<float>(*p);
  return def;
}

std::string Attrs::GetString(const std::string& k, const std::string& def) const {
  auto it = map_.find(k);
  if (it == map_.end()) return def;
  if (auto* p = std::get_if<std::string>(&it->second)) return *p;
  return def;
}

std::vector<int64_t> Attrs::GetInts(const std::string& k,
                                    const std::vector<int64_t>& def) const {
  auto it = map_.find(k);
  if (it == map_.end()) return def;
  if (auto* p = std::get_if<std::vector<int64_t>>(&it->second)) return *p;
  if (auto* p = std::get_if<int64_t>(&it->second)) return {*p};
  return def;
}

std::vector<float> Attrs::GetFloats(const std::string& k,
                                    const std::vector<float>& def) const {
  auto it = map_.find(k);
  if (it == map_.end()) return def;
  if (auto* p = std::get_if<std::vector<float>>(&it->second)) return *p;
  return def;
}

std::string AttrToString(const AttrValue& v) {
  std::ostringstream os;
  std::visit(
      [&os](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<float>>) {
          os << "[";
          for (size_t i = 0; i < x.size(); ++i) os << (i ? "," : "") << x[i];
          os << "]";
        } else {
          os << x;
        }
      },
      v);
  return os.str();
}

}  // namespace shoal
