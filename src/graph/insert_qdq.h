// Post-training static quantization as a graph transform: every Conv, Gemm
// and MatMul with a weight gets an int8 weight (symmetric, one scale per
// output channel) read through DequantizeLinear, and its activation input a
// QuantizeLinear -> DequantizeLinear pair with one scale for the tensor,
// from the range calibration observed. The result is the QDQ form ONNX
// tools read, and what the engine runs on int8 kernels.
#ifndef SHOAL_GRAPH_INSERT_QDQ_H_
#define SHOAL_GRAPH_INSERT_QDQ_H_

#include <map>
#include <string>
#include <vector>

#include "graph/quantization.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// The values a tensor took over the calibration samples.
struct ValueRange {
  float lo = 0.f, hi = 0.f;
  bool seen = false;
  void Add(const float* v, int64_t n);
};

// The activation tensors InsertQdq quantizes (the first input of each
// quantizable node), in graph order: what calibration must observe.
std::vector<std::string> QdqActivations(const Model& m);

// One scale for a tensor in `r`: a range that is never negative (after a
// ReLU, or an image) uses all 256 levels from zero point -128; one that is
// signed is symmetric with zero point 0. Both keep 0 exact, and neither
// asks an int8 kernel for a zero point (which u8 / s8 data absorbs).
QuantParams ActivationQuantParams(const ValueRange& r);

// Symmetric int8 scales per slice of `w` along `axis` (-1: one for the
// tensor); `*q` receives the quantized values.
QuantParams WeightQuantParams(const Tensor& w, int64_t axis, Tensor* q);

struct QdqSummary {
  int layers = 0;       // nodes given int8 weights and a quantized input
  int activations = 0;  // Q -> DQ pairs inserted
};

// Rewrites `m` (with weights) into QDQ form. `ranges` holds a seen range for
// every tensor QdqActivations names; a missing one is an error naming it.
StatusOr<QdqSummary> InsertQdq(const std::map<std::string, ValueRange>& ranges,
                               Model* m);

}  // namespace shoal

#endif  // SHOAL_GRAPH_INSERT_QDQ_H_
