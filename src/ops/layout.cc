// Ops that move data without arithmetic: Concat, Flatten, Reshape, Transpose,
// Slice, Split, Pad, SpaceToDepth (YOLOv2's reorg). Their int64 operands are
// attributes in shoal; the ONNX importer folds ONNX's constant inputs.
#include <algorithm>
#include <numeric>

#include "graph/op_registry.h"
#include "ops/axis.h"

namespace shoal {
namespace {

Status InferConcat(const Node& node, const InputShapes& in,
                   std::vector<Shape>* out) {
  if (!node.attrs.Has("axis")) return ShapeError(node, "axis is required");
  const Shape& first = in[0];
  const int64_t r = static_cast<int64_t>(first.size());
  int64_t axis = NormalizeAxis(node.attrs.GetInt("axis"), r);
  if (axis < 0) return ShapeError(node, "axis out of range");
  Shape y = first;
  y[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in[i];
    if (static_cast<int64_t>(s.size()) != r) {
      return ShapeError(node, "inputs differ in rank");
    }
    for (int64_t d = 0; d < r; ++d) {
      if (d != axis && s[d] != first[d]) {
        return ShapeError(node, "input " + std::to_string(i) + " " +
                                    ShapeToString(s) + " does not match " +
                                    ShapeToString(first) + " off axis " +
                                    std::to_string(axis));
      }
    }
    y[axis] += s[axis];
  }
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("Concat")
    .Doc("inputs equal off `axis` -> their concatenation along `axis`")
    .Inputs(1, 1 << 20)
    .Attr("axis")
    .Concatenates()
    .Infer(InferConcat);

Status InferFlatten(const Node& node, const InputShapes& in,
                    std::vector<Shape>* out) {
  const Shape& x = in[0];
  const int64_t r = static_cast<int64_t>(x.size());
  int64_t axis = node.attrs.GetInt("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return ShapeError(node, "axis out of range");
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= x[i];
  (*out)[0] = {a, b};
  return Status::Ok();
}

SHOAL_REGISTER_OP("Flatten")
    .Doc("[d0, ..., dr-1] -> [d0 * ... * d(axis-1), d(axis) * ... * dr-1]")
    .SplitAsRelayout()
    .KeepsSparsity()
    .Attr("axis")
    .Infer(InferFlatten);

// `shape`: 0 copies the input extent, -1 is inferred (ONNX, allowzero=0).
Status InferReshape(const Node& node, const InputShapes& in,
                    std::vector<Shape>* out) {
  const Shape& x = in[0];
  if (!node.attrs.Has("shape")) return ShapeError(node, "shape is required");
  Shape y = node.attrs.GetInts("shape");
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] == 0) {
      if (i >= x.size())
        return ShapeError(node, "0 refers past the input rank");
      y[i] = x[i];
    }
    if (y[i] == -1) {
      if (infer_at >= 0) return ShapeError(node, "more than one -1 in shape");
      infer_at = static_cast<int>(i);
    } else if (y[i] < 0) {
      return ShapeError(node, "negative extent in shape");
    } else {
      known *= y[i];
    }
  }
  const int64_t total = NumElements(x);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      return ShapeError(node, "cannot reshape " + ShapeToString(x));
    }
    y[infer_at] = total / known;
  }
  if (NumElements(y) != total) {
    return ShapeError(node, "cannot reshape " + ShapeToString(x) + " (" +
                                std::to_string(total) + " elements) to " +
                                ShapeToString(y));
  }
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("Reshape")
    .Doc("any shape -> `shape` (constant; 0 copies, -1 inferred)")
    .SplitAsRelayout()
    .KeepsSparsity()
    .Attr("shape")
    .Infer(InferReshape);

Status InferTranspose(const Node& node, const InputShapes& in,
                      std::vector<Shape>* out) {
  const Shape& x = in[0];
  std::vector<int64_t> perm = node.attrs.GetInts("perm");
  if (perm.empty()) {
    perm.resize(x.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  if (perm.size() != x.size())
    return ShapeError(node, "perm has the wrong length");
  std::vector<bool> seen(x.size(), false);
  Shape y(x.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(x.size()) ||
        seen[perm[i]]) {
      return ShapeError(node, "perm is not a permutation");
    }
    seen[perm[i]] = true;
    y[i] = x[perm[i]];
  }
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("Transpose")
    .Doc("any rank -> the axes permuted by `perm` (reversed if absent)")
    .SplitAsPermutation([](const Node& n, int64_t rank) {
      std::vector<int64_t> perm = n.attrs.GetInts("perm");
      if (perm.empty()) {
        perm.resize(rank);
        std::iota(perm.rbegin(), perm.rend(), 0);
      }
      return perm;
    })
    .KeepsSparsity()
    .Attr("perm")
    .Infer(InferTranspose);

}  // namespace

// Clamped [start, end) with step along one axis of extent `dim` (ONNX rules).
int64_t SliceExtent(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return start > end ? (start - end - step - 1) / (-step) : 0;
}

namespace {

Status InferSlice(const Node& node, const InputShapes& in,
                  std::vector<Shape>* out) {
  const Shape& x = in[0];
  const int64_t r = static_cast<int64_t>(x.size());
  auto starts = node.attrs.GetInts("starts");
  auto ends = node.attrs.GetInts("ends");
  auto axes = node.attrs.GetInts("axes");
  auto steps = node.attrs.GetInts("steps");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return ShapeError(node, "starts/ends/axes/steps differ in length");
  }
  Shape y = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = NormalizeAxis(axes[i], r);
    if (a < 0) return ShapeError(node, "axis out of range");
    if (steps[i] == 0) return ShapeError(node, "step 0");
    y[a] = SliceExtent(x[a], starts[i], ends[i], steps[i]);
  }
  (*out)[0] = y;
  return Status::Ok();
}

// The elements a Slice with positive steps takes (SplitFacts::strided_crops).
bool SliceStrides(const Node& node, const Shape& x, StridedCrop* c) {
  const int64_t r = static_cast<int64_t>(x.size());
  auto starts = node.attrs.GetInts("starts");
  auto ends = node.attrs.GetInts("ends");
  auto axes = node.attrs.GetInts("axes");
  auto steps = node.attrs.GetInts("steps");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return false;
  }
  c->begin.assign(r, 0);
  c->step.assign(r, 1);
  c->count = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = NormalizeAxis(axes[i], r);
    if (a < 0 || steps[i] < 1) return false;
    int64_t b = starts[i] < 0 ? starts[i] + x[a] : starts[i];
    c->begin[a] = std::clamp<int64_t>(b, 0, x[a]);
    c->step[a] = steps[i];
    c->count[a] = SliceExtent(x[a], starts[i], ends[i], steps[i]);
  }
  return true;
}

// The box a Slice with unit steps takes (SplitFacts::crops).
bool SliceBox(const Node& node, const Shape& x, std::vector<int64_t>* begin,
              std::vector<int64_t>* end) {
  StridedCrop c;
  if (!SliceStrides(node, x, &c)) return false;
  for (int64_t step : c.step) {
    if (step != 1) return false;
  }
  *begin = c.begin;
  end->resize(x.size());
  for (size_t a = 0; a < x.size(); ++a) (*end)[a] = c.begin[a] + c.count[a];
  return true;
}

SHOAL_REGISTER_OP("Slice")
    .Doc("any shape -> the constant starts/ends/axes/steps region")
    .SplitAsCrop(SliceBox)
    .SplitAsStridedCrop(SliceStrides)
    .Attr("starts")
    .Attr("ends")
    .Attr("axes")
    .Attr("steps")
    .Infer(InferSlice);

Status InferSplit(const Node& node, const InputShapes& in,
                  std::vector<Shape>* out) {
  const Shape& x = in[0];
  int64_t axis = NormalizeAxis(node.attrs.GetInt("axis", 0),
                               static_cast<int64_t>(x.size()));
  if (axis < 0) return ShapeError(node, "axis out of range");
  const size_t n = node.outputs.size();
  std::vector<int64_t> split = node.attrs.GetInts("split");
  if (split.empty()) {
    if (x[axis] % static_cast<int64_t>(n) != 0) {
      return ShapeError(node, "extent " + std::to_string(x[axis]) +
                                  " does not split evenly in " +
                                  std::to_string(n));
    }
    split.assign(n, x[axis] / static_cast<int64_t>(n));
  }
  if (split.size() != n ||
      std::accumulate(split.begin(), split.end(), int64_t{0}) != x[axis]) {
    return ShapeError(
        node, "split sizes do not add up to " + std::to_string(x[axis]));
  }
  for (size_t i = 0; i < n; ++i) {
    (*out)[i] = x;
    (*out)[i][axis] = split[i];
  }
  return Status::Ok();
}

SHOAL_REGISTER_OP("Split")
    .Doc("any shape -> parts along `axis` (sizes `split`, or equal)")
    .Outputs(1, 1 << 16)
    .Attr("axis")
    .Attr("split")
    .Infer(InferSplit);

// pads: [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over all axes.
Status InferPad(const Node& node, const InputShapes& in,
                std::vector<Shape>* out) {
  const Shape& x = in[0];
  auto pads = node.attrs.GetInts("pads");
  if (pads.size() != 2 * x.size()) {
    return ShapeError(node, "pads must have 2 x rank = " +
                                std::to_string(2 * x.size()) + " entries");
  }
  const std::string mode = node.attrs.GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return Unsupported("Pad mode '" + mode + "' of node '" + node.name + "'");
  }
  Shape y = x;
  for (size_t i = 0; i < x.size(); ++i) y[i] += pads[i] + pads[i + x.size()];
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("Pad")
    .Doc("any shape -> padded by constant `pads`; constant, reflect, edge")
    .Attr("pads")
    .Attr("mode")
    .Attr("value")
    .Infer(InferPad);

// YOLOv2's reorg: [N, C, H, W] -> [N, C*b*b, H/b, W/b] (ONNX SpaceToDepth).
Status InferSpaceToDepth(const Node& node, const InputShapes& in,
                         std::vector<Shape>* out) {
  const Shape& x = in[0];
  const int64_t b = node.attrs.GetInt("blocksize", 0);
  if (x.size() != 4) return ShapeError(node, "input must be NCHW");
  if (b <= 0 || x[2] % b != 0 || x[3] % b != 0) {
    return ShapeError(node, "blocksize " + std::to_string(b) +
                                " does not divide " + ShapeToString(x));
  }
  (*out)[0] = {x[0], x[1] * b * b, x[2] / b, x[3] / b};
  return Status::Ok();
}

SHOAL_REGISTER_OP("SpaceToDepth")
    .Doc("[N, C, H, W] -> [N, C*b*b, H/b, W/b]")
    .Attr("blocksize")
    .Infer(InferSpaceToDepth);

Status InferReduce(const Node& node, const InputShapes& in,
                   std::vector<Shape>* out) {
  const Shape& x = in[0];
  const int64_t r = static_cast<int64_t>(x.size());
  auto axes = node.attrs.GetInts("axes");
  if (axes.empty()) {
    axes.resize(r);
    std::iota(axes.begin(), axes.end(), 0);
  }
  std::vector<bool> reduce(r, false);
  for (int64_t a : axes) {
    int64_t n = NormalizeAxis(a, r);
    if (n < 0) return ShapeError(node, "axis out of range");
    reduce[n] = true;
  }
  const bool keep = node.attrs.GetInt("keepdims", 1) != 0;
  Shape y;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduce[i])
      y.push_back(x[i]);
    else if (keep)
      y.push_back(1);
  }
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("ReduceMean")
    .Doc(
        "any shape -> the mean over `axes` (all if absent), kept as 1 "
        "with keepdims")
    .SplitOffReducedAxes()
    .Attr("axes")
    .Attr("keepdims")
    .Infer(InferReduce);

SHOAL_REGISTER_OP("ReduceL2")
    .Doc(
        "any shape -> the Euclidean norm over `axes` (all if absent), kept "
        "as 1 with keepdims")
    .SplitOffReducedAxes()
    .Attr("axes")
    .Attr("keepdims")
    .Infer(InferReduce);

}  // namespace
}  // namespace shoal
