// A step that runs a reference kernel on plain tensors.
#ifndef SHOAL_ENGINE_REFERENCE_STEP_H_
#define SHOAL_ENGINE_REFERENCE_STEP_H_

#include <functional>
#include <string>
#include <vector>

#include "engine/exec_builder.h"
#include "kernels/tensor_view.h"

namespace shoal {

// Adds the reference kernel of `node` (its inputs reordered to plain first).
Status AddReferenceStep(ExecBuilder& b, const Node& node);

// A kernel call as RefKernelFn makes it, with whatever else it was bound to.
using RefCall = std::function<Status(const Node&, const std::vector<ConstView>&,
                                     const std::vector<MutView>&)>;

// A reference step that runs `kernel` for `node` on `inputs`, one per node
// input, in place of the node's own (an int8 layer reads the int8 values
// its DQs would dequantize); outputs are the node's.
Status AddReferenceStep(ExecBuilder& b, const Node& node,
                        const std::vector<std::string>& inputs, RefCall kernel);

}  // namespace shoal

#endif  // SHOAL_ENGINE_REFERENCE_STEP_H_
