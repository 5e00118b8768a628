// Per-op conversion rules: ONNX control inputs become shoal attributes,
// legacy attributes with their default value are dropped, and opset
// differences are resolved here so that shoal ops have one form each.
#include "onnx/convert_rules.h"

#include <algorithm>
#include <limits>
#include <map>

#include "onnx/onnx_tensor.h"
#include "ops/axis.h"

namespace shoal {
namespace {

Status Reshape(ConvertCtx* c) {
  const auto* allowzero = c->Take("allowzero");
  if (c->opset < 5) return Status::Ok();  // `shape` is an attribute
  bool given = false;
  ASSIGN_OR_RETURN(auto shape, c->ConstInts(1, "shape", &given));
  if (!given) return InvalidArgument("Reshape has no shape input");
  bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  if (allowzero && allowzero->i() != 0 && has_zero) {
    return c->Unsupported("allowzero=1 with a 0 in shape (empty tensors)");
  }
  c->out->attrs.Set("shape", shape);
  c->DropInput(1);
  return Status::Ok();
}

Status Slice(ConvertCtx* c) {
  if (c->opset < 10) return Status::Ok();  // starts/ends/axes attributes
  const char* names[] = {"starts", "ends", "axes", "steps"};
  for (int i = 1; i <= 4; ++i) {
    bool given = false;
    ASSIGN_OR_RETURN(auto v, c->ConstInts(i, names[i - 1], &given));
    if (given) c->out->attrs.Set(names[i - 1], v);
    c->DropInput(i);
  }
  if (!c->out->attrs.Has("starts") || !c->out->attrs.Has("ends")) {
    return InvalidArgument("Slice needs starts and ends");
  }
  return Status::Ok();
}

Status Pad(ConvertCtx* c) {
  if (c->opset < 11) return Status::Ok();  // pads/value attributes
  bool given = false;
  ASSIGN_OR_RETURN(auto pads, c->ConstInts(1, "pads", &given));
  if (!given) return InvalidArgument("Pad has no pads input");
  if (c->HasInput(2)) {
    ASSIGN_OR_RETURN(float value, c->ConstScalar(2, "constant_value"));
    c->out->attrs.Set("value", value);
  }
  if (c->HasInput(3)) {  // opset 18: pads cover only `axes`
    ASSIGN_OR_RETURN(auto axes, c->ConstInts(3, "axes"));
    const Shape* x = c->env->ShapeOf(0);
    if (!x) return c->Unsupported("axes with an input of unknown rank");
    const int64_t r = static_cast<int64_t>(x->size());
    const size_t n = axes.size();
    if (pads.size() != 2 * n)
      return InvalidArgument("Pad: pads do not match axes");
    std::vector<int64_t> full(2 * r, 0);
    for (size_t i = 0; i < n; ++i) {
      int64_t a = NormalizeAxis(axes[i], r);
      if (a < 0) return InvalidArgument("Pad: axis out of range");
      full[a] = pads[i];
      full[r + a] = pads[n + i];
    }
    pads = full;
  }
  for (int i = 1; i <= 3; ++i) c->DropInput(i);
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
    // Nothing to pad (swin_t pads its windows to a multiple of 7 whatever
    // the size, by 0 at 224x224): the identity, removed after import.
    c->Take("mode");
    c->out->attrs.Erase("value");
    c->out->op = "Identity";
    return Status::Ok();
  }
  c->out->attrs.Set("pads", pads);
  return Status::Ok();
}

// Bounds are always set: an absent one is the float range's end.
Status Clip(ConvertCtx* c) {
  float lo = std::numeric_limits<float>::lowest();
  float hi = std::numeric_limits<float>::max();
  if (c->opset < 11) {
    if (const auto* a = c->Take("min")) lo = a->f();
    if (const auto* a = c->Take("max")) hi = a->f();
  } else {
    if (c->HasInput(1)) {
      ASSIGN_OR_RETURN(lo, c->ConstScalar(1, "min"));
    }
    if (c->HasInput(2)) {
      ASSIGN_OR_RETURN(hi, c->ConstScalar(2, "max"));
    }
    c->DropInput(1);
    c->DropInput(2);
  }
  c->out->attrs.Set("min", lo);
  c->out->attrs.Set("max", hi);
  return Status::Ok();
}

Status Split(ConvertCtx* c) {
  const auto* num_outputs = c->Take("num_outputs");  // opset 18
  if (c->opset >= 13) {
    bool given = false;
    ASSIGN_OR_RETURN(auto split, c->ConstInts(1, "split", &given));
    if (given) c->out->attrs.Set("split", split);
    c->DropInput(1);
    if (given || !num_outputs) return Status::Ok();
    // num_outputs allows a smaller last part: spell the sizes out.
    const Shape* x = c->env->ShapeOf(0);
    if (!x) return c->Unsupported("num_outputs with an input of unknown shape");
    const auto* axis_attr = c->Take("axis");
    const int64_t axis_in = axis_attr ? axis_attr->i() : 0;
    const int64_t axis =
        NormalizeAxis(axis_in, static_cast<int64_t>(x->size()));
    const int64_t n = num_outputs->i();
    if (axis < 0 || n <= 0)
      return InvalidArgument("Split: bad axis or num_outputs");
    const int64_t dim = (*x)[axis], chunk = (dim + n - 1) / n;
    std::vector<int64_t> sizes;
    for (int64_t left = dim; left > 0; left -= chunk)
      sizes.push_back(std::min(chunk, left));
    c->out->attrs.Set("axis", axis_in);
    c->out->attrs.Set("split", sizes);
  }
  return Status::Ok();
}

Status ReduceMean(ConvertCtx* c) {
  const auto* noop = c->Take("noop_with_empty_axes");  // opset 18
  if (c->opset < 18) return Status::Ok();              // `axes` is an attribute
  bool given = false;
  ASSIGN_OR_RETURN(auto axes, c->ConstInts(1, "axes", &given));
  if (given) c->out->attrs.Set("axes", axes);
  c->DropInput(1);
  if (noop && noop->i() != 0 && axes.empty()) {
    return c->Unsupported("noop_with_empty_axes=1 without axes");
  }
  return Status::Ok();
}

// Before opset 13 Softmax flattens [axis, rank) into one axis; that equals
// shoal's one-axis softmax only when the axes between are all 1.
Status Softmax(ConvertCtx* c) {
  if (c->opset >= 13) return Status::Ok();
  const auto* a = c->Take("axis");
  const Shape* x = c->env->ShapeOf(0);
  if (!x) return c->Unsupported("opset < 13 with an input of unknown shape");
  const int64_t r = static_cast<int64_t>(x->size());
  const int64_t axis = NormalizeAxis(a ? a->i() : 1, r);
  if (axis < 0) return InvalidArgument("Softmax: axis out of range");
  for (int64_t d = axis; d + 1 < r; ++d) {
    if ((*x)[d] != 1) {
      return c->Unsupported("opset " + std::to_string(c->opset) +
                            " softmax over axes " + std::to_string(axis) +
                            ".. of " + ShapeToString(*x) +
                            " flattened together; shoal normalises one axis");
    }
  }
  c->out->attrs.Set("axis", r - 1);
  return Status::Ok();
}

Status Dropout(ConvertCtx* c) {
  c->Take("is_test");  // opset < 7; inference either way
  if (c->opset < 12) return Status::Ok();
  float ratio = 0.5f;  // ONNX's default
  if (c->HasInput(1)) {
    ASSIGN_OR_RETURN(ratio, c->ConstScalar(1, "ratio"));
    c->out->attrs.Set("ratio", ratio);
  }
  if (c->HasInput(2)) {
    ASSIGN_OR_RETURN(float training, c->ConstScalar(2, "training_mode"));
    // In training mode a ratio of 0 drops nothing and scales by 1: still
    // the identity (swin_t's attention dropout exports so).
    if (training != 0 && ratio != 0) {
      return c->Unsupported("training_mode=true with ratio " +
                            std::to_string(ratio));
    }
  }
  c->DropInput(1);
  c->DropInput(2);
  return Status::Ok();
}

Status BatchNorm(ConvertCtx* c) {
  c->Take("is_test");
  c->Take("consumed_inputs");
  if (const auto* s = c->Take("spatial"); s && s->i() != 1) {
    return c->Unsupported("spatial=0 (per-element statistics)");
  }
  return Status::Ok();
}

// Squeeze / Unsqueeze of run-time data: a Reshape to the static shape.
Status SqueezeOrUnsqueeze(ConvertCtx* c) {
  const bool un = c->node.op_type() == "Unsqueeze";
  std::vector<int64_t> axes;
  if (c->opset >= 13) {
    ASSIGN_OR_RETURN(axes, c->ConstInts(1, "axes"));
    c->DropInput(1);
  } else if (const auto* a = c->Take("axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  const Shape* x = c->env->ShapeOf(0);
  if (!x) return c->Unsupported("input of unknown shape");
  const int64_t r = static_cast<int64_t>(x->size()) +
                    (un ? static_cast<int64_t>(axes.size()) : 0);
  std::vector<bool> marked(r, false);
  for (int64_t a : axes) {
    int64_t n = NormalizeAxis(a, r);
    if (n < 0 || marked[n] || (!un && (*x)[n] != 1)) {
      return InvalidArgument(c->node.op_type() + ": bad axis " +
                             std::to_string(a) + " for " + ShapeToString(*x));
    }
    marked[n] = true;
  }
  Shape y;
  size_t next = 0;
  for (int64_t d = 0; d < r; ++d) {
    if (un)
      y.push_back(marked[d] ? 1 : (*x)[next++]);
    else if (!(axes.empty() ? (*x)[d] == 1 : marked[d]))
      y.push_back((*x)[d]);
  }
  c->out->op = "Reshape";
  c->out->attrs.Set("shape", y);
  return Status::Ok();
}

// A Cast of run-time data to float is the identity in an all-f32 IR.
Status Cast(ConvertCtx* c) {
  const auto* to = c->Take("to");
  c->Take("saturate");
  if (!to || !IsFloatType(static_cast<int32_t>(to->i()))) {
    return c->Unsupported("cast of run-time data to a non-float type");
  }
  c->out->op = "Identity";
  return Status::Ok();
}

// Constant indices become attributes; their shape decides the output rank.
Status Gather(ConvertCtx* c) {
  ASSIGN_OR_RETURN(const ConstValue* v, c->env->Constant(1));
  if (!v) {
    return c->Unsupported("indices (input '" + c->node.input(1) +
                          "') are computed at run time; shoal needs them "
                          "constant");
  }
  c->out->attrs.Set("indices", v->ToInts());
  c->out->attrs.Set("indices_shape", std::vector<int64_t>(v->shape));
  c->DropInput(1);
  return Status::Ok();
}

Status Expand(ConvertCtx* c) {
  bool given = false;
  ASSIGN_OR_RETURN(auto shape, c->ConstInts(1, "shape", &given));
  if (!given) return InvalidArgument("Expand has no shape input");
  c->out->attrs.Set("shape", shape);
  c->DropInput(1);
  return Status::Ok();
}

// Scales or sizes become attributes with one entry per input axis (opset
// 18's `axes` spelt out); roi matters only to tf_crop_and_resize, which
// the op refuses.
Status Resize(ConvertCtx* c) {
  const int scales_at = c->opset < 11 ? 1 : 2, sizes_at = 3;
  std::vector<float> scales;
  if (c->HasInput(scales_at)) {
    ASSIGN_OR_RETURN(const ConstValue* v, c->env->Constant(scales_at));
    if (!v) return c->Unsupported("scales computed at run time");
    scales = v->ToFloats();
  }
  std::vector<int64_t> sizes;
  if (c->HasInput(sizes_at)) {
    ASSIGN_OR_RETURN(sizes, c->ConstInts(sizes_at, "sizes"));
  }
  const Shape* x = c->env->ShapeOf(0);
  if (!x) return c->Unsupported("an input of unknown shape");
  const int64_t r = static_cast<int64_t>(x->size());
  const auto* axes_attr = c->Take("axes");
  if (const auto* p = c->Take("keep_aspect_ratio_policy");
      p && p->s() != "stretch" && !sizes.empty()) {
    return c->Unsupported("keep_aspect_ratio_policy '" + p->s() + "'");
  }
  if (axes_attr) {
    std::vector<float> full_scales(scales.empty() ? 0 : r, 1.f);
    std::vector<int64_t> full_sizes(sizes.empty() ? 0 : r);
    for (int64_t i = 0; i < static_cast<int64_t>(full_sizes.size()); ++i)
      full_sizes[i] = (*x)[i];
    for (int i = 0; i < axes_attr->ints_size(); ++i) {
      const int64_t a = NormalizeAxis(axes_attr->ints(i), r);
      if (a < 0) return InvalidArgument("Resize: axis out of range");
      if (!scales.empty() && i < static_cast<int>(scales.size()))
        full_scales[a] = scales[i];
      if (!sizes.empty() && i < static_cast<int>(sizes.size()))
        full_sizes[a] = sizes[i];
    }
    scales = full_scales;
    sizes = full_sizes;
  }
  if (!sizes.empty()) {
    c->out->attrs.Set("sizes", sizes);
  } else if (!scales.empty()) {
    c->out->attrs.Set("scales", scales);
  }
  for (int i = 1; i <= 3; ++i) c->DropInput(i);
  return Status::Ok();
}

// QuantizeLinear / DequantizeLinear: the constant scale and zero point
// become attributes. shoal's quantized values are int8: ONNX quantizes to
// uint8 when the zero point is absent or uint8, which is refused.
// Per-axis parameters are taken on constants (weights) only, so that a Q or
// DQ of an activation stays elementwise for the partitioners.
Status Quant(ConvertCtx* c) {
  const bool dq = c->node.op_type() == "DequantizeLinear";
  const auto* axis_attr = c->Take("axis");
  if (!c->HasInput(1)) return InvalidArgument("no scale input");
  ASSIGN_OR_RETURN(const ConstValue* scale, c->env->Constant(1));
  if (!scale) {
    return c->Unsupported("scale (input '" + c->node.input(1) +
                          "') is computed at run time; shoal needs it "
                          "constant");
  }
  if (!scale->is_float || scale->shape.size() > 1 || scale->size() == 0) {
    return InvalidArgument("scale '" + c->node.input(1) +
                           "' must be a float scalar or 1-D tensor, got " +
                           (scale->is_float ? "" : "integers of shape ") +
                           ShapeToString(scale->shape));
  }
  auto type_name = [](int32_t dt) {
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dt));
  };
  std::vector<int64_t> zero_point(scale->size(), 0);
  if (c->HasInput(2)) {
    ASSIGN_OR_RETURN(const ConstValue* zp, c->env->Constant(2));
    if (!zp) {
      return c->Unsupported("zero point (input '" + c->node.input(2) +
                            "') is computed at run time; shoal needs it "
                            "constant");
    }
    if (zp->is_float ||
        (zp->data_type != 0 && zp->data_type != onnx::TensorProto::INT8)) {
      return c->Unsupported("zero point '" + c->node.input(2) + "' of type " +
                            type_name(zp->data_type) +
                            "; shoal quantizes to int8");
    }
    if (zp->size() != scale->size()) {
      return InvalidArgument("zero point '" + c->node.input(2) + "' has " +
                             std::to_string(zp->size()) + " values for " +
                             std::to_string(scale->size()) + " scales");
    }
    zero_point = zp->ints;
  } else if (!dq) {
    return c->Unsupported(
        "no zero point, which makes ONNX quantize to uint8; shoal quantizes "
        "to int8 (give an int8 zero point)");
  }
  const std::optional<int32_t> x = c->env->ConstantType(0);
  if (dq && x && *x != 0 && *x != onnx::TensorProto::INT8) {
    return c->Unsupported("input '" + c->node.input(0) + "' of type " +
                          type_name(*x) + "; shoal dequantizes int8");
  }
  if (scale->size() > 1) {
    if (!x) {
      return c->Unsupported(
          "per-axis scales on '" + c->node.input(0) +
          "', which is computed at run time; shoal quantizes activations "
          "per tensor");
    }
    c->out->attrs.Set("axis", axis_attr ? axis_attr->i() : int64_t{1});
  }
  c->out->attrs.Set("scale", scale->floats);
  c->out->attrs.Set("zero_point", zero_point);
  c->DropInput(1);
  c->DropInput(2);
  return Status::Ok();
}

}  // namespace

const std::map<std::string, std::string>& ImportedAs() {
  static const auto* m = new std::map<std::string, std::string>{
      {"Squeeze", "Reshape"}, {"Unsqueeze", "Reshape"}, {"Cast", "Identity"}};
  return *m;
}

const ConvertRule* FindConvertRule(const std::string& op) {
  static const auto* rules = new std::map<std::string, ConvertRule>{
      {"Reshape", Reshape},
      {"Slice", Slice},
      {"Pad", Pad},
      {"Clip", Clip},
      {"Split", Split},
      {"ReduceMean", ReduceMean},
      {"ReduceL2", ReduceMean},  // the same attributes and opset-18 axes
      {"Softmax", Softmax},
      {"Dropout", Dropout},
      {"BatchNormalization", BatchNorm},
      {"Squeeze", SqueezeOrUnsqueeze},
      {"Unsqueeze", SqueezeOrUnsqueeze},
      {"Cast", Cast},
      {"Gather", Gather},
      {"Expand", Expand},
      {"Resize", Resize},
      {"QuantizeLinear", Quant},
      {"DequantizeLinear", Quant},
  };
  auto it = rules->find(op);
  return it == rules->end() ? nullptr : &it->second;
}

}  // namespace shoal
