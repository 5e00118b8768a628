// Below opset 17 torch.onnx writes nn.LayerNorm as the arithmetic it does:
//   m = ReduceMean(x), d = Sub(x, m), v = ReduceMean(Pow(d, 2)),
//   y = Div(d, Sqrt(Add(v, epsilon))), Mul(y, scale), Add(., shift)
// nine nodes, one tensor read three times. The importer reads such a chain
// as the one LayerNormalization node opset 17 exports (the same value, its
// statistics in double), so that a transformer's blocks look alike at every
// opset and LayerNorm runs as one kernel.
#ifndef SHOAL_ONNX_FUSE_LAYER_NORM_H_
#define SHOAL_ONNX_FUSE_LAYER_NORM_H_

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shoal {

// A chain matched by its structure: ops and wiring, every tensor between
// read only inside the chain. Whether its constants make it a LayerNorm
// is for the importer to check (LayerNormFromChain).
struct LayerNormChain {
  std::vector<int> nodes;  // in graph order; the last computes the output
  std::string x;           // the input
  // The exponent of Pow (empty for Mul(d, d)) and the epsilon added.
  std::string exponent, epsilon;
  // The two ReduceMeans' axes: attributes, or (opset 18) inputs.
  std::vector<int64_t> axes1, axes2;
  std::string axes1_input, axes2_input;
  std::string scale, shift;  // the other operands of Mul and Add
  // The Add of the shift, or -1 when the chain ends at the Mul.
  int shift_node = -1;
  int scale_node = -1;
};

// Every chain of `g`, keyed by the index of its last node (the Add of the
// shift, or the Mul of the scale when no Add follows).
std::map<int, LayerNormChain> FindLayerNormChains(const onnx::GraphProto& g);

// What the importer knows of a chain's operands.
struct LayerNormFacts {
  int64_t rank = 0;                   // of x
  std::vector<int64_t> axes1, axes2;  // resolved axes of the ReduceMeans
  std::optional<double> exponent;     // Pow's, when a scalar constant
  std::optional<double> epsilon;      // when a scalar constant
  std::optional<int64_t> scale_rank;  // when scale is a constant
  std::optional<int64_t> shift_rank;  // when shift is a constant
};

// The LayerNormalization node for the chain, computing the output of its
// Add of the shift (`with_shift`) or of its Mul of the scale; nullopt when
// the facts do not make it one: the axes are not the last ones, alike in
// both, the exponent is not 2, or a parameter is not a constant over the
// normalised axes.
std::optional<onnx::NodeProto> LayerNormFromChain(const onnx::GraphProto& g,
                                                  const LayerNormChain& c,
                                                  const LayerNormFacts& f,
                                                  bool with_shift);

}  // namespace shoal

#endif  // SHOAL_ONNX_FUSE_LAYER_NORM_H_
