#include "io/image_metadata.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace shoal {
namespace {

// "0.485,0.456,0.406": the shortest text that reads back as the same float.
std::string FloatList(const std::vector<float>& v) {
  std::ostringstream o;
  o.precision(9);
  for (size_t i = 0; i < v.size(); ++i) o << (i ? "," : "") << v[i];
  return o.str();
}

StatusOr<std::vector<float>> ParseFloatList(const std::string& key,
                                            const std::string& text) {
  std::vector<float> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    float v = 0;
    try {
      v = std::stof(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < item.size() && item[used] == ' ') ++used;
    if (used == 0 || used != item.size() || !std::isfinite(v))
      return InvalidArgument("model metadata '" + key + "' is '" +
                             text.substr(0, 80) +
                             "', not numbers separated by commas");
    out.push_back(v);
  }
  if (out.empty())
    return InvalidArgument("model metadata '" + key + "' is empty");
  return out;
}

}  // namespace

void SetClassNames(const std::vector<std::string>& names, ModelMetadata* m) {
  (*m)[kClassNamesKey] = nlohmann::json(names).dump();
}

void SetImageNormalization(const ImageNormalization& n, ModelMetadata* m) {
  (*m)[kImageMeanKey] = FloatList(n.mean);
  (*m)[kImageStdKey] = FloatList(n.std);
}

StatusOr<std::vector<std::string>> ClassNamesOf(const ModelMetadata& m) {
  auto it = m.find(kClassNamesKey);
  if (it == m.end()) return std::vector<std::string>{};
  const nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  std::vector<std::string> names;
  bool ok = j.is_array();
  for (size_t i = 0; ok && i < j.size(); ++i) {
    ok = j[i].is_string();
    if (ok) names.push_back(j[i].get<std::string>());
  }
  if (!ok)
    return InvalidArgument("model metadata '" + std::string(kClassNamesKey) +
                           "' is not a JSON array of strings: '" +
                           it->second.substr(0, 80) + "'");
  return names;
}

StatusOr<ImageNormalization> ImageNormalizationOf(const ModelMetadata& m,
                                                  int64_t channels) {
  auto mean = m.find(kImageMeanKey), std = m.find(kImageStdKey);
  if (mean == m.end() && std == m.end()) return DefaultNormalization(channels);
  if (mean == m.end() || std == m.end())
    return InvalidArgument(
        "model metadata has '" +
        std::string(mean == m.end() ? kImageStdKey : kImageMeanKey) +
        "' without '" +
        std::string(mean == m.end() ? kImageMeanKey : kImageStdKey) + "'");
  ImageNormalization n;
  ASSIGN_OR_RETURN(n.mean, ParseFloatList(mean->first, mean->second));
  ASSIGN_OR_RETURN(n.std, ParseFloatList(std->first, std->second));
  for (const auto& [key, v] :
       {std::pair{kImageMeanKey, &n.mean}, std::pair{kImageStdKey, &n.std}}) {
    if (v->size() != 1 && static_cast<int64_t>(v->size()) != channels)
      return InvalidArgument(
          "model metadata '" + std::string(key) + "' has " +
          std::to_string(v->size()) + " values for an input of " +
          std::to_string(channels) + " channels: give 1 or " +
          std::to_string(channels));
  }
  for (float s : n.std)
    if (!(s > 0))
      return InvalidArgument("model metadata '" + std::string(kImageStdKey) +
                             "' holds " + FloatList({s}) +
                             ": a std must be positive");
  // One value holds for every channel (LoadImage takes one per channel).
  if (n.mean.size() == 1) n.mean.assign(channels, n.mean[0]);
  if (n.std.size() == 1) n.std.assign(channels, n.std[0]);
  return n;
}

}  // namespace shoal
