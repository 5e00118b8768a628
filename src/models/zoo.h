// The model zoo: the papers' models as built-in builders, each registered
// once in its own file with its default input shape and its reference.
#ifndef SHOAL_MODELS_ZOO_H_
#define SHOAL_MODELS_ZOO_H_

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

struct ZooEntry {
  std::string name;
  std::string description;
  std::string reference;  // where its definition comes from
  Shape input_shape;      // default, batch 1
  int64_t num_classes = 0;
  std::function<StatusOr<Graph>(const Shape& input_shape)> build;
};

class Zoo {
 public:
  static Zoo& Global();
  int Register(ZooEntry e);
  const ZooEntry* Find(const std::string& name) const;
  const std::vector<ZooEntry>& entries() const { return entries_; }

 private:
  std::vector<ZooEntry> entries_;
};

#define SHOAL_REGISTER_MODEL(...)                                       \
  static int SHOAL_CONCAT(shoal_model_, __COUNTER__) [[maybe_unused]] = \
      ::shoal::Zoo::Global().Register(::shoal::ZooEntry{__VA_ARGS__})

// Whether zoo model `spec` (with input `shape`, or its default when empty)
// takes an image: an N x C x H x W input of 1 or 3 channels. C3D's clips
// and any ONNX file are not known to (`shoal plan --image-input` says so).
bool ZooModelTakesImages(const std::string& spec, const Shape& shape = {});

// Deterministic weights for every weight tensor of `g`: each tensor drawn
// from its own stream seeded by (seed, tensor name), so any device can make
// its slice alone. Scaled (He / fan-in) so activations stay O(1) in deep
// models.
WeightStore RandomWeights(const Graph& g, uint64_t seed);

}  // namespace shoal

#endif  // SHOAL_MODELS_ZOO_H_
