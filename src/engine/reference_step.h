// A step that runs a reference kernel on plain tensors.
#ifndef SHOAL_ENGINE_REFERENCE_STEP_H_
#define SHOAL_ENGINE_REFERENCE_STEP_H_

#include "engine/exec_builder.h"

namespace shoal {

// Adds the reference kernel of `node` (its inputs reordered to plain first).
Status AddReferenceStep(ExecBuilder& b, const Node& node);

}  // namespace shoal

#endif  // SHOAL_ENGINE_REFERENCE_STEP_H_
