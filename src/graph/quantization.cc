#include "graph/quantization.h"

#include <string>

#include "graph/op_registry.h"

namespace shoal {

StatusOr<QuantParams> ReadQuantParams(const Node& node, const Shape& x) {
  QuantParams p;
  p.scale = node.attrs.GetFloats("scale");
  if (p.scale.empty()) return ShapeError(node, "has no scale");
  for (float s : p.scale) {
    if (!std::isfinite(s) || s <= 0.f) {
      return ShapeError(node, "scale " + std::to_string(s) +
                                  " is not a finite positive number");
    }
  }
  const std::vector<int64_t> zp = node.attrs.GetInts("zero_point");
  if (!zp.empty() && zp.size() != p.scale.size()) {
    return ShapeError(node, std::to_string(zp.size()) + " zero points for " +
                                std::to_string(p.scale.size()) + " scales");
  }
  for (int64_t z : zp) {
    if (z < kInt8Min || z > kInt8Max) {
      return ShapeError(node, "zero point " + std::to_string(z) +
                                  " is outside int8's [-128, 127]");
    }
  }
  p.zero_point.assign(p.scale.size(), 0);
  for (size_t i = 0; i < zp.size(); ++i)
    p.zero_point[i] = static_cast<int32_t>(zp[i]);
  if (p.per_tensor()) return p;
  const int64_t r = static_cast<int64_t>(x.size());
  const int64_t axis = node.attrs.GetInt("axis", 1);
  if (axis < -r || axis >= r) {
    return ShapeError(node, "axis " + std::to_string(axis) +
                                " is out of range for " + ShapeToString(x));
  }
  p.axis = axis < 0 ? axis + r : axis;
  if (x[p.axis] != static_cast<int64_t>(p.scale.size())) {
    return ShapeError(node, std::to_string(p.scale.size()) +
                                " scales along axis " + std::to_string(axis) +
                                " of " + ShapeToString(x));
  }
  return p;
}

bool IsInt8Weight(const Graph& g, const std::string& name) {
  const TensorInfo* t = g.FindTensor(name);
  if (!t || !t->is_weight()) return false;
  const std::vector<int> readers = g.ConsumerIndices(name);
  if (readers.empty()) return false;
  for (int r : readers)
    if (g.nodes[r].op != "DequantizeLinear") return false;
  return true;
}

void SetQuantParams(const QuantParams& p, Node* node) {
  node->attrs.Set("scale", p.scale);
  node->attrs.Set("zero_point", std::vector<int64_t>(p.zero_point.begin(),
                                                     p.zero_point.end()));
  if (p.per_tensor())
    node->attrs.Erase("axis");
  else
    node->attrs.Set("axis", p.axis);
}

void ApplyQuant(const QuantParams& p, const Shape& shape, bool quantize,
                const float* x, float* y) {
  int64_t channels = 1, inner = 1;
  if (!p.per_tensor()) {
    channels = shape[p.axis];
    for (size_t i = p.axis + 1; i < shape.size(); ++i) inner *= shape[i];
  }
  const int64_t n = NumElements(shape);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = (i / inner) % channels;
    y[i] = quantize ? QuantizeValue(x[i], p.scale[c], p.zero_point[c])
                    : DequantizeValue(x[i], p.scale[c], p.zero_point[c]);
  }
}

float SymmetricScale(float absmax) {
  return absmax > 0.f ? absmax / static_cast<float>(kInt8Max) : 1.f;
}

}  // namespace shoal
