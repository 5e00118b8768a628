// GELU in its erf form, as torch.onnx writes it at every opset it exports
// (ONNX's own Gelu op is opset 20):
//
//   y = Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5)
//
// five elementwise passes, one of them the reference kernel's erf. Matched
// at its Div, the chain runs as one oneDNN eltwise_gelu_erf, which computes
// the same 0.5 x (1 + erf(x / sqrt 2)).
#ifndef SHOAL_ENGINE_ONEDNN_GELU_H_
#define SHOAL_ENGINE_ONEDNN_GELU_H_

#include "engine/exec_builder.h"

namespace shoal {

// If `div` starts the chain above (each intermediate read only by the next
// node), adds one step for the whole of it, marks the other four nodes
// done and returns true; false leaves `div` to the plain binary kernel.
StatusOr<bool> BuildGeluErf(ExecBuilder& b, const Node& div);

}  // namespace shoal

#endif  // SHOAL_ENGINE_ONEDNN_GELU_H_
