// Internal to constant folding: the per-op rules and their shared helpers.
#ifndef SHOAL_ONNX_FOLD_OPS_H_
#define SHOAL_ONNX_FOLD_OPS_H_

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx/const_value.h"
#include "onnx/fold_constants.h"
#include "util/status.h"

namespace shoal {

struct FoldCtx {
  const onnx::NodeProto& node;
  int64_t opset;
  const std::vector<FoldInput>& in;
  const std::string& base_dir;

  // The value of input `i`, or nullptr when absent.
  const ConstValue* Value(size_t i) const {
    return i < in.size() && in[i].present ? in[i].value : nullptr;
  }
  bool HasAttr(const std::string& name) const;
  int64_t IntAttr(const std::string& name, int64_t def) const;
  std::vector<int64_t> IntsAttr(const std::string& name) const;
  // InvalidArgument with the op's name.
  Status Error(const std::string& what) const;
  // An error unless a value of shape `out` is within kMaxFoldedElements:
  // checked before a rule allocates it.
  Status Fits(const Shape& out) const;
};

StatusOr<ConstValue> FoldBinary(const FoldCtx& c);  // Add Sub Mul Div Mod Min
                                                    // Max Equal Less Greater
StatusOr<ConstValue> FoldUnary(const FoldCtx& c);   // Neg Not
StatusOr<ConstValue> FoldWhere(const FoldCtx& c);
StatusOr<ConstValue> FoldExpand(const FoldCtx& c);
StatusOr<ConstValue> FoldConcat(const FoldCtx& c);
StatusOr<ConstValue> FoldReshape(const FoldCtx& c);  // Reshape Flatten
StatusOr<ConstValue> FoldUnsqueeze(const FoldCtx& c);
StatusOr<ConstValue> FoldSqueeze(const FoldCtx& c);
StatusOr<ConstValue> FoldGather(const FoldCtx& c);
StatusOr<ConstValue> FoldSlice(const FoldCtx& c);
StatusOr<ConstValue> FoldTranspose(const FoldCtx& c);
StatusOr<ConstValue> FoldScatterND(const FoldCtx& c);

// out[i] = src[index[i]], keeping the element type.
ConstValue Pick(const ConstValue& src, Shape out_shape,
                const std::vector<int64_t>& index);
// numpy broadcasting; false when the shapes do not broadcast.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out);
// For each element of `out`, the element of a tensor of shape `in` that
// broadcasting maps onto it.
std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out);

}  // namespace shoal

#endif  // SHOAL_ONNX_FOLD_OPS_H_
