// Test helpers for the reference kernels: run one op on plain tensors, with
// output shapes from the op's own shape inference.
#ifndef SHOAL_KERNELS_REFERENCE_REF_TEST_UTIL_H_
#define SHOAL_KERNELS_REFERENCE_REF_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_registry.h"
#include "graph/weights.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace ref_test {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

inline Attrs MakeAttrs(
    std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

// Runs the reference kernel of `op` on `inputs` (nullptr: an absent optional
// input). Outputs start as NaN so that an element the kernel forgets to
// write shows up in the comparison.
inline StatusOr<std::vector<Tensor>> RunRef(
    const std::string& op, const std::vector<const Tensor*>& inputs,
    const Attrs& attrs = {}, int num_outputs = 1) {
  Node node;
  node.name = "ref_" + op;
  node.op = op;
  node.attrs = attrs;
  InputShapes shapes;
  std::vector<ConstView> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor* t = inputs[i];
    node.inputs.push_back(t ? "x" + std::to_string(i) : "");
    shapes.shapes.push_back(t ? t->shape : Shape{});
    shapes.present.push_back(t != nullptr);
    views.push_back(t ? ConstView{t->data.data(), t->shape} : ConstView{});
  }
  for (int i = 0; i < num_outputs; ++i) {
    node.outputs.push_back("y" + std::to_string(i));
  }
  const OpSchema* schema = OpRegistry::Global().Find(op);
  RefKernelFn fn = RefKernelRegistry::Global().Find(op);
  if (!schema || !fn) return NotFound("op or kernel '" + op + "'");
  std::vector<Shape> out_shapes;
  RETURN_IF_ERROR(schema->InferShapes(node, shapes, &out_shapes));
  std::vector<Tensor> outs;
  std::vector<MutView> out_views;
  for (const Shape& s : out_shapes) {
    outs.emplace_back(
        s, std::vector<float>(NumElements(s),
                              std::numeric_limits<float>::quiet_NaN()));
  }
  for (Tensor& t : outs) out_views.push_back(MutView{t.data.data(), t.shape});
  RETURN_IF_ERROR(fn(node, views, out_views));
  return outs;
}

// The single output of a call expected to succeed.
inline Tensor RunOne(const std::string& op,
                     const std::vector<const Tensor*>& inputs,
                     const Attrs& attrs = {}) {
  auto r = RunRef(op, inputs, attrs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r.value()[0]) : Tensor();
}

// Values 0, 1, 2, ... in row-major order.
inline Tensor Iota(const Shape& s, float start = 0.f) {
  Tensor t(s);
  for (int64_t i = 0; i < t.size(); ++i) t.data[i] = start + i;
  return t;
}

// Seeded uniform values in [lo, hi).
inline Tensor Random(const Shape& s, uint32_t seed, float lo = -1.f,
                     float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(s);
  for (float& v : t.data) v = dist(rng);
  return t;
}

// Shape and every value within `tol` relative (absolute below 1).
inline ::testing::AssertionResult Near(const Tensor& got, const Shape& shape,
                                       const Floats& want, float tol = 1e-6f) {
  if (got.shape != shape) {
    return ::testing::AssertionFailure() << "shape " << ShapeToString(got.shape)
                                         << ", want " << ShapeToString(shape);
  }
  if (got.data.size() != want.size()) {
    return ::testing::AssertionFailure()
           << got.data.size() << " values, want " << want.size();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const float bound = tol * std::max(1.f, std::fabs(want[i]));
    if (!(std::fabs(got.data[i] - want[i]) <= bound)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got.data[i] << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ref_test
}  // namespace shoal

#endif  // SHOAL_KERNELS_REFERENCE_REF_TEST_UTIL_H_
