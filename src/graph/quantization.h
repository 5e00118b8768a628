// The affine int8 quantization of QuantizeLinear and DequantizeLinear:
// q = saturate(round_half_even(x / scale) + zero_point), x = (q - zero_point)
// * scale, per tensor or per slice along one axis. Quantized values live in
// shoal's f32 tensors as exact integers in [-128, 127].
#ifndef SHOAL_GRAPH_QUANTIZATION_H_
#define SHOAL_GRAPH_QUANTIZATION_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

constexpr int kInt8Min = -128, kInt8Max = 127;

// A Q or DQ node's parameters, from its attributes `scale` (floats),
// `zero_point` (ints, zeros when absent) and `axis` (ONNX's default 1).
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;  // one per scale
  int64_t axis = -1;                // normalised; -1 when per tensor
  bool per_tensor() const { return scale.size() == 1; }
};

// Reads and checks the parameters of `node` for an input of shape `x`: at
// least one scale, each finite and positive; as many zero points as scales,
// each in [-128, 127]; several scales only along an axis of that extent.
// Errors name the node.
StatusOr<QuantParams> ReadQuantParams(const Node& node, const Shape& x);

// Sets `node`'s attributes to `p` (per tensor: no axis).
void SetQuantParams(const QuantParams& p, Node* node);

inline float QuantizeValue(float x, float scale, int32_t zero_point) {
  // nearbyint rounds half to even in the default rounding mode, as ONNX asks.
  const float q = std::nearbyint(x / scale) + static_cast<float>(zero_point);
  return std::fmin(std::fmax(q, static_cast<float>(kInt8Min)),
                   static_cast<float>(kInt8Max));
}

inline float DequantizeValue(float q, float scale, int32_t zero_point) {
  return (q - static_cast<float>(zero_point)) * scale;
}

// Applies Q (`quantize`) or DQ to `n` values of shape `shape`.
void ApplyQuant(const QuantParams& p, const Shape& shape, bool quantize,
                const float* x, float* y);

// Whether weight `name` of `g` holds int8 values, a byte each where it is
// stored: DequantizeLinear is its only kind of reader.
bool IsInt8Weight(const Graph& g, const std::string& name);

// The symmetric int8 scale for values in [-absmax, absmax]: absmax / 127,
// or 1 for an all-zero range (any scale represents zeros exactly).
float SymmetricScale(float absmax);

}  // namespace shoal

#endif  // SHOAL_GRAPH_QUANTIZATION_H_
