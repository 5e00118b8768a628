// Constant folding of ONNX nodes whose inputs are known at import time:
// the int64 shape sub-graphs PyTorch emits (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape, ...), Constant nodes and arithmetic on constants. What
// folds never becomes a shoal node; its values feed control attributes.
#ifndef SHOAL_ONNX_FOLD_CONSTANTS_H_
#define SHOAL_ONNX_FOLD_CONSTANTS_H_

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx/const_value.h"
#include "util/status.h"

namespace shoal {

// One input of a node to fold. Shape and Size need only the shape, so an
// activation whose static shape is known qualifies for them.
struct FoldInput {
  bool present = false;               // false: "" (absent optional input)
  const ConstValue* value = nullptr;  // known value, or nullptr
  const Shape* shape = nullptr;       // known shape (set with value too)
};

// The most elements a folded value may have. Folding serves shape
// arithmetic and small constants (masks, index ranges); a 140-byte model
// whose Range or ConstantOfShape claims billions of elements is refused
// before they are made (it once took 4 GiB), naming the node and this
// limit. 2^24: a 4096 x 4096 mask.
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

// True when `op` has a folding rule.
bool IsFoldableOp(const std::string& op);
// Every op IsFoldableOp accepts, sorted.
std::vector<std::string> FoldableOps();

// Whether folding `op` needs the value of input `i` (Shape and Size need
// only its shape).
bool FoldNeedsValue(const std::string& op, int i);

// True when `node` has a folding rule and enough of its inputs are known.
bool CanFold(const onnx::NodeProto& node, const std::vector<FoldInput>& in);

// Evaluates `node` (CanFold must hold): one value per output. `base_dir`
// resolves external data of Constant tensors.
StatusOr<std::vector<ConstValue>> FoldNode(const onnx::NodeProto& node,
                                           int64_t opset,
                                           const std::vector<FoldInput>& in,
                                           const std::string& base_dir);

}  // namespace shoal

#endif  // SHOAL_ONNX_FOLD_CONSTANTS_H_
