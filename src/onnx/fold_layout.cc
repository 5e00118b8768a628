// Folding of data-movement ops on constants: each computes, for every output
// element, which input element it copies (then Pick copies them).
#include <algorithm>
#include <numeric>

#include "onnx/fold_ops.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// Input `i` (opset >= `since`) or attribute `name` (older opsets): ONNX
// moved several int lists from attributes to inputs over time.
std::vector<int64_t> IntsFromInputOrAttr(const FoldCtx& c, size_t i,
                                         int64_t since, const std::string& name,
                                         bool* given) {
  if (c.opset >= since) {
    const ConstValue* v = c.Value(i);
    *given = v != nullptr;
    return v ? v->ToInts() : std::vector<int64_t>{};
  }
  *given = c.HasAttr(name);
  return c.IntsAttr(name);
}

// All elements, in order (a reshape copies them unchanged).
std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

StatusOr<ConstValue> FoldConcat(const FoldCtx& c) {
  std::vector<const ConstValue*> parts;
  for (size_t i = 0; i < c.in.size(); ++i)
    if (c.Value(i)) parts.push_back(c.Value(i));
  const Shape& first = parts[0]->shape;
  const int64_t r = static_cast<int64_t>(first.size());
  const int64_t axis = NormalizeAxis(c.IntAttr("axis", 0), r);
  if (axis < 0) return c.Error("axis out of range");
  Shape out = first;
  out[axis] = 0;
  for (const ConstValue* p : parts) {
    if (static_cast<int64_t>(p->shape.size()) != r)
      return c.Error("ranks differ");
    for (int64_t d = 0; d < r; ++d) {
      if (d != axis && p->shape[d] != first[d]) return c.Error("shapes differ");
    }
    out[axis] += p->shape[axis];
  }
  const bool is_float =
      std::any_of(parts.begin(), parts.end(),
                  [](const ConstValue* p) { return p->is_float; });
  // Outer blocks: each part contributes shape[axis] * inner elements in turn.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= first[d];
  ConstValue v;
  v.is_float = is_float;
  v.shape = out;
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstValue* p : parts) {
      const int64_t block = p->shape[axis] * inner;
      for (int64_t k = 0; k < block; ++k) {
        if (is_float)
          v.floats.push_back(static_cast<float>(p->AsDouble(o * block + k)));
        else
          v.ints.push_back(p->ints[o * block + k]);
      }
    }
  }
  return v;
}

StatusOr<ConstValue> FoldReshape(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  Shape out;
  if (c.node.op_type() == "Flatten") {
    const int64_t r = static_cast<int64_t>(x.shape.size());
    int64_t axis = c.IntAttr("axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) return c.Error("axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= x.shape[i];
    out = {a, b};
  } else {
    bool given = false;
    out = IntsFromInputOrAttr(c, 1, 5, "shape", &given);
    if (!given) return c.Error("shape is required");
    const bool allowzero = c.IntAttr("allowzero", 0) != 0;
    int infer_at = -1;
    int64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allowzero) {
        if (i >= x.shape.size()) return c.Error("0 refers past the input rank");
        out[i] = x.shape[i];
      }
      if (out[i] == -1 && infer_at < 0)
        infer_at = static_cast<int>(i);
      else if (out[i] < 0)
        return c.Error("bad extent in shape");
      else
        known *= out[i];
    }
    if (infer_at >= 0) {
      if (known == 0 || x.size() % known) return c.Error("cannot infer -1");
      out[infer_at] = x.size() / known;
    }
  }
  if (NumElements(out) != x.size()) {
    return c.Error("cannot reshape " + ShapeToString(x.shape) + " to " +
                   ShapeToString(out));
  }
  return Pick(x, out, Iota(x.size()));
}

StatusOr<ConstValue> FoldUnsqueeze(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  bool given = false;
  std::vector<int64_t> axes = IntsFromInputOrAttr(c, 1, 13, "axes", &given);
  const int64_t r = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> added(r, false);
  for (int64_t a : axes) {
    int64_t n = NormalizeAxis(a, r);
    if (n < 0 || added[n]) return c.Error("bad axes");
    added[n] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < r; ++d) out.push_back(added[d] ? 1 : x.shape[next++]);
  return Pick(x, out, Iota(x.size()));
}

StatusOr<ConstValue> FoldSqueeze(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  bool given = false;
  std::vector<int64_t> axes = IntsFromInputOrAttr(c, 1, 13, "axes", &given);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop(r, false);
  for (int64_t a : axes) {
    int64_t n = NormalizeAxis(a, r);
    if (n < 0 || x.shape[n] != 1)
      return c.Error("cannot squeeze axis " + std::to_string(a));
    drop[n] = true;
  }
  Shape out;
  for (int64_t d = 0; d < r; ++d) {
    bool squeeze = axes.empty() ? x.shape[d] == 1 : drop[d];
    if (!squeeze) out.push_back(x.shape[d]);
  }
  return Pick(x, out, Iota(x.size()));
}

StatusOr<ConstValue> FoldGather(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  const ConstValue& idx = *c.Value(1);
  if (idx.is_float) return c.Error("indices must be integers");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  const int64_t axis = NormalizeAxis(c.IntAttr("axis", 0), r);
  if (axis < 0) return c.Error("axis out of range");
  const int64_t dim = x.shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.shape[d];
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  RETURN_IF_ERROR(c.Fits(out));
  std::vector<int64_t> index;
  index.reserve(NumElements(out));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : idx.ints) {
      if (j < -dim || j >= dim) {
        return c.Error("index " + std::to_string(j) + " out of range for " +
                       std::to_string(dim));
      }
      if (j < 0) j += dim;
      for (int64_t k = 0; k < inner; ++k)
        index.push_back((o * dim + j) * inner + k);
    }
  }
  return Pick(x, out, index);
}

StatusOr<ConstValue> FoldSlice(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  bool has_starts = false, has_ends = false, has_axes = false,
       has_steps = false;
  auto starts = IntsFromInputOrAttr(c, 1, 10, "starts", &has_starts);
  auto ends = IntsFromInputOrAttr(c, 2, 10, "ends", &has_ends);
  auto axes = IntsFromInputOrAttr(c, 3, 10, "axes", &has_axes);
  std::vector<int64_t> steps;
  if (c.opset >= 10) steps = IntsFromInputOrAttr(c, 4, 10, "steps", &has_steps);
  if (!has_starts || !has_ends) return c.Error("starts and ends are required");
  if (!has_axes) axes = Iota(static_cast<int64_t>(starts.size()));
  if (!has_steps) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return c.Error("starts/ends/axes/steps differ in length");
  }
  // Per axis: first index, step and count (ONNX clamping rules).
  std::vector<int64_t> first(r, 0), step(r, 1);
  Shape out = x.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = NormalizeAxis(axes[i], r);
    if (a < 0 || steps[i] == 0) return c.Error("bad axis or step");
    const int64_t dim = x.shape[a];
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim)
                     : std::clamp<int64_t>(s, 0, dim - 1);
    first[a] = s;
    step[a] = steps[i];
    out[a] = SliceExtent(dim, starts[i], ends[i], steps[i]);
  }
  const std::vector<int64_t> st = Strides(x.shape);
  const int64_t n = NumElements(out);
  std::vector<int64_t> index(n), pos(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (int64_t d = 0; d < r; ++d)
      src += (first[d] + pos[d] * step[d]) * st[d];
    index[k] = src;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return Pick(x, out, index);
}

StatusOr<ConstValue> FoldTranspose(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> perm = c.IntsAttr("perm");
  if (perm.empty()) {
    perm = Iota(r);
    std::reverse(perm.begin(), perm.end());
  }
  if (static_cast<int64_t>(perm.size()) != r) return c.Error("bad perm");
  Shape out(r);
  std::vector<bool> seen(r, false);
  for (int64_t d = 0; d < r; ++d) {
    if (perm[d] < 0 || perm[d] >= r || seen[perm[d]])
      return c.Error("bad perm");
    seen[perm[d]] = true;
    out[d] = x.shape[perm[d]];
  }
  const std::vector<int64_t> st = Strides(x.shape);
  const int64_t n = x.size();
  std::vector<int64_t> index(n), pos(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (int64_t d = 0; d < r; ++d) src += pos[d] * st[perm[d]];
    index[k] = src;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return Pick(x, out, index);
}

}  // namespace shoal

namespace shoal {

// ScatterND: a copy of data with the slices that indices [..., k] name
// replaced by (or, with `reduction`, combined with) the rows of updates.
// swin_t builds its shifted-window attention mask this way, from shapes
// alone, so the whole mask folds to a constant.
StatusOr<ConstValue> FoldScatterND(const FoldCtx& c) {
  const ConstValue &data = *c.Value(0), &indices = *c.Value(1),
                   &updates = *c.Value(2);
  if (indices.is_float) return c.Error("indices must be integers");
  const int64_t r = static_cast<int64_t>(data.shape.size());
  if (indices.shape.empty()) return c.Error("indices must have rank >= 1");
  const int64_t k = indices.shape.back();
  if (k < 1 || k > r) return c.Error("indices' last axis must be 1..rank");
  // updates: indices.shape[:-1] + data.shape[k:]
  Shape want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != want) {
    return c.Error("updates have shape " + ShapeToString(updates.shape) +
                   ", expected " + ShapeToString(want));
  }
  std::string reduction = "none";
  for (const auto& a : c.node.attribute())
    if (a.name() == "reduction") reduction = a.s();
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return c.Error("reduction '" + reduction + "' is not supported");
  int64_t slice = 1;
  for (int64_t d = k; d < r; ++d) slice *= data.shape[d];
  const std::vector<int64_t> st = Strides(data.shape);
  ConstValue out = data;
  if (updates.is_float && !out.is_float) {
    out.floats = out.ToFloats();
    out.ints.clear();
    out.is_float = true;
  }
  const int64_t tuples = indices.size() / k;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = indices.ints[t * k + d];
      if (i < 0) i += data.shape[d];
      if (i < 0 || i >= data.shape[d]) {
        return c.Error("index " + std::to_string(indices.ints[t * k + d]) +
                       " is out of range for axis " + std::to_string(d) +
                       " of extent " + std::to_string(data.shape[d]));
      }
      at += i * st[d];
    }
    for (int64_t e = 0; e < slice; ++e) {
      const int64_t src = t * slice + e, dst = at + e;
      if (out.is_float) {
        const float u = static_cast<float>(updates.AsDouble(src));
        float& o = out.floats[dst];
        o = reduction == "add" ? o + u : reduction == "mul" ? o * u : u;
      } else {
        const int64_t u = updates.AsInt(src);
        int64_t& o = out.ints[dst];
        o = reduction == "add" ? o + u : reduction == "mul" ? o * u : u;
      }
    }
  }
  return out;
}

}  // namespace shoal
