#include "kernels/reference/ref_util.h"

#include <algorithm>

#include "graph/op_registry.h"

namespace shoal {
namespace ref {

Status KernelError(const Node& node, const std::string& what) {
  return InvalidArgument("reference kernel of node '" + node.name + "' (" +
                         node.op + "): " + what);
}

Status CheckCall(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  if (in.size() != node.inputs.size() || out.size() != node.outputs.size()) {
    return KernelError(node, "got " + std::to_string(in.size()) +
                                 " inputs and " + std::to_string(out.size()) +
                                 " outputs for a node with " +
                                 std::to_string(node.inputs.size()) + " and " +
                                 std::to_string(node.outputs.size()));
  }
  const OpSchema* schema = OpRegistry::Global().Find(node.op);
  if (!schema) return Unsupported("op '" + node.op + "' is not registered");
  InputShapes shapes;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool named = !node.inputs[i].empty();
    // A present input of zero elements may legitimately have no buffer.
    if (named ? (!in[i].present() && in[i].size() > 0) : in[i].present()) {
      return KernelError(
          node, "input " + std::to_string(i) +
                    (named ? " has no data" : " is absent but has data"));
    }
    shapes.shapes.push_back(in[i].shape);
    shapes.present.push_back(named);
  }
  std::vector<Shape> want;
  RETURN_IF_ERROR(schema->InferShapes(node, shapes, &want));
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].shape != want[i]) {
      return KernelError(node, "output " + std::to_string(i) + " is " +
                                   ShapeToString(out[i].shape) +
                                   " but shape inference gives " +
                                   ShapeToString(want[i]));
    }
    // Only a multi-output op (Split) may leave an unnamed output unbound.
    const bool may_skip = node.outputs[i].empty() && out.size() > 1;
    if (!out[i].data && out[i].size() > 0 && !may_skip) {
      return KernelError(node,
                         "output " + std::to_string(i) + " has no buffer");
    }
  }
  return Status::Ok();
}

std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out) {
  const std::vector<int64_t> own = Strides(in);
  std::vector<int64_t> s(out.size(), 0);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 1) s[lead + i] = own[i];
  }
  return s;
}

void Unflatten(int64_t flat, const Shape& shape, std::vector<int64_t>* idx) {
  idx->resize(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    (*idx)[i] = flat % shape[i];
    flat /= shape[i];
  }
}

void TapRange(int64_t in, int64_t out, int64_t stride, int64_t pad,
              int64_t offset, int64_t* lo, int64_t* hi) {
  // o * stride + (offset - pad) in [0, in - 1].
  const int64_t shift = offset - pad;
  *lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  const int64_t room = in - 1 - shift;
  *hi = room < 0 ? 0 : std::min(out, room / stride + 1);
  *lo = std::min(*lo, *hi);
}

Window3 ToWindow3(const WindowGeometry& geo,
                  const std::vector<int64_t>& in_spatial,
                  const std::vector<int64_t>& out_spatial) {
  Window3 w;
  const size_t lead = 3 - in_spatial.size();
  for (size_t i = 0; i < in_spatial.size(); ++i) {
    w.in[lead + i] = in_spatial[i];
    w.out[lead + i] = out_spatial[i];
    w.kernel[lead + i] = geo.kernel[i];
    w.stride[lead + i] = geo.stride[i];
    w.dilation[lead + i] = geo.dilation[i];
    w.pad_begin[lead + i] = geo.pad_begin[i];
    w.pad_end[lead + i] = geo.pad_end[i];
  }
  return w;
}

MatMulBatches MatMulShape(Shape a, Shape b) {
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulBatches m;
  m.rows = a[a.size() - 2];
  m.inner = a.back();
  m.cols = b.back();
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const size_t r = std::max(a_batch.size(), b_batch.size());
  m.batch.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da =
        i + a_batch.size() >= r ? a_batch[i + a_batch.size() - r] : 1;
    const int64_t db =
        i + b_batch.size() >= r ? b_batch[i + b_batch.size() - r] : 1;
    m.batch[i] = std::max(da, db);
  }
  m.a_stride = BroadcastStrides(a_batch, m.batch);
  m.b_stride = BroadcastStrides(b_batch, m.batch);
  return m;
}

void MatMulBatches::Offsets(int64_t i, std::vector<int64_t>* idx, int64_t* a,
                            int64_t* b) const {
  Unflatten(i, batch, idx);
  int64_t ia = 0, ib = 0;
  for (size_t d = 0; d < batch.size(); ++d) {
    ia += (*idx)[d] * a_stride[d];
    ib += (*idx)[d] * b_stride[d];
  }
  *a = ia * rows * inner;
  *b = ib * inner * cols;
}

}  // namespace ref
}  // namespace shoal
