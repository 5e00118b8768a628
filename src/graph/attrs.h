// Node attributes: a small typed map, the ONNX attribute kinds shoal uses.
#ifndef SHOAL_GRAPH_ATTRS_H_
#define SHOAL_GRAPH_ATTRS_H_

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace shoal {

using AttrValue = std::variant<int64_t, float, std::string,
                               std::vector<int64_t>, std::vector<float>>;

class Attrs {
 public:
  void Set(const std::string& k, AttrValue v) { map_[k] = std::move(v); }
  bool Has(const std::string& k) const { return map_.count(k) != 0; }
  void Erase(const std::string& k) { map_.erase(k); }

  int64_t GetInt(const std::string& k, int64_t def = 0) const;
  float GetFloat(const std::string& k, float def = 0.f) const;
  std::string GetString(const std::string& k, const std::string& def = "") const;
  std::vector<int64_t> GetInts(const std::string& k,
                               const std::vector<int64_t>& def = {}) const;
  std::vector<float> GetFloats(const std::string& k,
                               const std::vector<float>& def = {}) const;

  const std::map<std::string, AttrValue>& map() const { return map_; }
  bool operator==(const Attrs& o) const { return map_ == o.map_; }

 private:
  std::map<std::string, AttrValue> map_;
};

std::string AttrToString(const AttrValue& v);

}  // namespace shoal

#endif  // SHOAL_GRAPH_ATTRS_H_
