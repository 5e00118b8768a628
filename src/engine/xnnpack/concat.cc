// Concat on XNNPACK: one strided copy (copy_nc_x32) per input into its
// slice of the output. In NHWC (when a 4-D input arrives so) a channel
// concat interleaves rows of C_i channels into rows of ΣC_i; in plain
// layout, rows of d_i · (what follows the axis) elements.
#include "engine/xnnpack/xnn_step.h"
#include "ops/axis.h"

namespace shoal {
namespace {

StatusOr<bool> BuildConcat(ExecBuilder& b, const Node& n) {
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  const int64_t rank = static_cast<int64_t>(ys.size());
  if (rank == 0 || n.inputs.empty()) return false;
  const int64_t axis = NormalizeAxis(n.attrs.GetInt("axis", 1), rank);
  std::vector<int> xs;
  bool nhwc = false;
  for (const auto& in : n.inputs) {
    const int x = ActivationValue(b, in);
    if (x < 0) return false;  // a constant operand
    const Value& v = b.value(x);
    if (v.shape.size() != ys.size()) return false;
    nhwc |= rank == 4 && IsNhwc(v.md, v.shape) && !IsPlain(v.md, v.shape);
    xs.push_back(x);
  }
  // The axes in memory order, and where the concat axis is among them.
  const std::vector<int64_t> order =
      nhwc ? std::vector<int64_t>{0, 2, 3, 1} : [&] {
        std::vector<int64_t> o(rank);
        for (int64_t i = 0; i < rank; ++i) o[i] = i;
        return o;
      }();
  int64_t outer = 1, inner = 1;
  bool before = true;
  for (int64_t a : order) {
    if (a == axis)
      before = false;
    else if (before)
      outer *= ys[a];
    else
      inner *= ys[a];
  }
  const size_t out_row = static_cast<size_t>(ys[axis] * inner);
  if (outer == 0 || out_row == 0) return false;

  // One copy per non-empty input: its rows into its offset of each output
  // row. The operators first, so that declining adds nothing.
  struct Copy {
    std::shared_ptr<XnnOperator> op;
    size_t input, offset;  // in elements, within an output row
  };
  std::vector<Copy> copies;
  size_t offset = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t row = static_cast<size_t>(b.value(xs[i]).shape[axis] * inner);
    if (row == 0) continue;  // an empty input adds nothing
    xnn_operator_t o = nullptr;
    std::shared_ptr<XnnOperator> op =
        Wrap(xnn_create_copy_nc_x32(row, row, out_row, 0, &o), &o);
    if (!op) return false;
    copies.push_back({op, i, offset});
    offset += row;
  }
  auto step = std::make_unique<XnnStep>();
  for (int x : xs) {
    const Shape s = b.value(x).shape;
    step->AddInput(nhwc ? b.InLayout(x, NhwcDesc(s)) : b.Plain(x));
  }
  const size_t rows = static_cast<size_t>(outer);
  for (const Copy& c : copies) {
    const size_t input = c.input, off = c.offset;
    step->AddCall(c.op, [input, off, rows](
                            xnn_operator_t o, const std::vector<void*>& in,
                            const std::vector<void*>& out, pthreadpool_t pool) {
      return xnn_setup_copy_nc_x32(o, rows, in[input],
                                   static_cast<float*>(out[0]) + off, pool);
    });
  }
  AddXnnOutputStep(b, n, nullptr, std::move(step), ys,
                   nhwc ? NhwcDesc(ys) : PlainDesc(ys));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Concat", BuildConcat);

}  // namespace
}  // namespace shoal
