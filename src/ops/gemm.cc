// Gemm (fully connected) and MatMul.
#include "graph/op_registry.h"

namespace shoal {
namespace {

// Y = alpha * A' B' + beta * C, A' = transA ? A^T : A (A is [M, K]).
Status InferGemm(const Node& node, const InputShapes& in,
                 std::vector<Shape>* out) {
  const Shape& a = in[0];
  const Shape& b = in[1];
  if (a.size() != 2 || b.size() != 2) {
    return ShapeError(node, "A and B must be 2-D, got " + ShapeToString(a) +
                                " and " + ShapeToString(b));
  }
  const bool ta = node.attrs.GetInt("transA", 0) != 0;
  const bool tb = node.attrs.GetInt("transB", 0) != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb) {
    return ShapeError(node, "inner dimensions differ: A " + ShapeToString(a) +
                                ", B " + ShapeToString(b));
  }
  if (in.Has(2)) {
    const Shape& c = in[2];
    bool ok = c.size() <= 2;
    // C must broadcast to [M, N].
    if (c.size() >= 1 && c.back() != n && c.back() != 1) ok = false;
    if (c.size() == 2 && c[0] != m && c[0] != 1) ok = false;
    if (!ok) {
      return ShapeError(node, "C " + ShapeToString(c) +
                                  " does not broadcast to " +
                                  ShapeToString({m, n}));
    }
  }
  (*out)[0] = {m, n};
  return Status::Ok();
}

OpWork GemmWork(const Node& node, const InputShapes& in,
                const std::vector<Shape>& out) {
  const bool ta = node.attrs.GetInt("transA", 0) != 0;
  int64_t k = ta ? in[0][0] : in[0][1];
  OpWork work;
  work.macs = NumElements(out[0]) * k;
  work.gemm = GemmShape{out[0][0], k, out[0][1], 1};
  return work;
}

SHOAL_REGISTER_OP("Gemm")
    .Doc(
        "A [M, K] (or [K, M], transA), B [K, N] (or [N, K], transB), "
        "optional C broadcast to [M, N] -> [M, N]")
    .SplitByWeight()
    .Weight([](const Node& n) {
      const bool trans_b = n.attrs.GetInt("transB", 0) != 0;  // B [N, K]
      WeightLayout l;
      l.out_axis = trans_b ? 0 : 1;
      l.in_axis = trans_b ? 1 : 0;
      l.transposed_input = n.attrs.GetInt("transA", 0) != 0;
      return l;
    })
    .Inputs(2, 3)
    .Attr("alpha")
    .Attr("beta")
    .Attr("transA")
    .Attr("transB")
    .Infer(InferGemm)
    .Work(GemmWork);

// numpy matmul: 1-D operands are promoted and the added axis removed.
Status InferMatMul(const Node& node, const InputShapes& in,
                   std::vector<Shape>* out) {
  Shape a = in[0], b = in[1];
  if (a.empty() || b.empty())
    return ShapeError(node, "operands must not be scalars");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back();
  const int64_t kb = b[b.size() - 2], n = b.back();
  if (k != kb) {
    return ShapeError(node, "inner dimensions differ: " + ShapeToString(in[0]) +
                                " x " + ShapeToString(in[1]));
  }
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  size_t r = std::max(ba.size(), bb.size());
  Shape batch(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i + ba.size() >= r ? ba[i + ba.size() - r] : 1;
    int64_t db = i + bb.size() >= r ? bb[i + bb.size() - r] : 1;
    if (da != db && da != 1 && db != 1) {
      return ShapeError(
          node, "batch dimensions do not broadcast: " + ShapeToString(in[0]) +
                    " x " + ShapeToString(in[1]));
    }
    batch[i] = std::max(da, db);
  }
  Shape y = batch;
  if (!a1) y.push_back(m);
  if (!b1) y.push_back(n);
  (*out)[0] = y;
  return Status::Ok();
}

OpWork MatMulWork(const Node&, const InputShapes& in,
                  const std::vector<Shape>& out) {
  const Shape& a = in[0];
  int64_t k = a.back();
  OpWork work;
  work.macs = NumElements(out[0]) * k;
  // A 1-D right operand leaves no column axis: one column.
  const int64_t cols = in[1].size() >= 2 && !out[0].empty() ? out[0].back() : 1;
  if (cols > 0) {
    work.gemm = GemmShape{NumElements(out[0]) / cols, k, cols, 1};
  }
  return work;
}

// A MatMul by a constant 2-D weight becomes a Gemm on import (a dense layer,
// split as one); what stays a MatMul multiplies two activations, split only
// along its batch axes (attention's heads) where both operands are.
SHOAL_REGISTER_OP("MatMul")
    .Doc(
        "numpy matmul: A [..., M, K], B [..., K, N] -> [batch..., M, N], "
        "batch axes broadcast, 1-D operands promoted")
    .Inputs(2, 2)
    // Of two activations, one product per batch index (attention's heads).
    .SplitByBatchAxes()
    // By a constant 2-D B [K, N]; not split by weight (the partitioners
    // take Gemm, which graph/matmul_to_gemm.h makes of such a MatMul).
    .Weight([](const Node&) {
      WeightLayout l;
      l.out_axis = 1;
      l.in_axis = 0;
      return l;
    })
    .Infer(InferMatMul)
    .Work(MatMulWork);

}  // namespace
}  // namespace shoal
