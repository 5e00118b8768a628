// Below opset 14 torch.onnx writes HardSwish as x * HardSigmoid(x) (alpha
// 1/6, beta 1/2): two nodes and a tensor read twice, so the conv before it
// cannot apply it as a post-op. The pair is rewritten as one HardSwish
// node, the form opset 14 and later export, with the same value
// (x * clip(x / 6 + 1/2, 0, 1)).
#ifndef SHOAL_GRAPH_FUSE_HARDSWISH_H_
#define SHOAL_GRAPH_FUSE_HARDSWISH_H_

#include "graph/graph.h"

namespace shoal {

// Rewrites every Mul(x, HardSigmoid(x)) (either operand order) whose
// HardSigmoid output nothing else reads; the HardSwish node keeps the Mul's
// name and output. Returns the number rewritten.
int FuseHardSwish(Graph* g);

}  // namespace shoal

#endif  // SHOAL_GRAPH_FUSE_HARDSWISH_H_
