// Test helpers for the int8 kernels: run one on int8 values held in f32,
// and random int8 data.
#ifndef SHOAL_KERNELS_REFERENCE_INT8_TEST_UTIL_H_
#define SHOAL_KERNELS_REFERENCE_INT8_TEST_UTIL_H_

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "kernels/reference/int8_kernels.h"
#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace int8_test {

// Parameters: one scale and zero point per tensor, or per slice of `axis`.
inline QuantParams Params(std::vector<float> scale, std::vector<int32_t> zero,
                          int64_t axis = -1) {
  QuantParams p;
  p.scale = std::move(scale);
  p.zero_point = std::move(zero);
  p.axis = p.scale.size() == 1 ? -1 : axis;
  return p;
}

// Runs the int8 kernel of `op` on x_q and w_q (and `bias`, may be null).
// Outputs start as NaN, so an element the kernel skips shows.
inline StatusOr<Tensor> RunInt8(const std::string& op, const Tensor& xq,
                                const QuantParams& xp, const Tensor& wq,
                                const QuantParams& wp, const Tensor* bias,
                                const Attrs& attrs = {}) {
  Node node;
  node.name = "int8_" + op;
  node.op = op;
  node.attrs = attrs;
  node.inputs = {"x", "w"};
  node.outputs = {"y"};
  InputShapes shapes;
  shapes.shapes = {xq.shape, wq.shape};
  shapes.present = {true, true};
  std::vector<ConstView> in = {{xq.data.data(), xq.shape},
                               {wq.data.data(), wq.shape}};
  if (bias) {
    node.inputs.push_back("b");
    shapes.shapes.push_back(bias->shape);
    shapes.present.push_back(true);
    in.push_back({bias->data.data(), bias->shape});
  }
  const OpSchema* schema = OpRegistry::Global().Find(op);
  Int8KernelFn fn = Int8KernelRegistry::Global().Find(op);
  if (!schema || !fn) return NotFound("op or int8 kernel '" + op + "'");
  std::vector<Shape> out_shapes;
  RETURN_IF_ERROR(schema->InferShapes(node, shapes, &out_shapes));
  Tensor y(out_shapes[0],
           std::vector<float>(NumElements(out_shapes[0]),
                              std::numeric_limits<float>::quiet_NaN()));
  RETURN_IF_ERROR(fn(node, in, xp, wp, {MutView{y.data.data(), y.shape}}));
  return y;
}

// Seeded int8 values, uniform in [lo, hi].
inline Tensor RandomInt8(const Shape& s, uint32_t seed, int lo = kInt8Min,
                         int hi = kInt8Max) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  Tensor t(s);
  for (float& v : t.data) v = static_cast<float>(dist(rng));
  return t;
}

}  // namespace int8_test
}  // namespace shoal

#endif  // SHOAL_KERNELS_REFERENCE_INT8_TEST_UTIL_H_
