// Vision transformers (ViT, Dosovitskiy et al. 2021) as torchvision defines
// them, in the form shoal imports torchvision's ONNX export: every Linear
// over token rows a Gemm on [tokens, features] between Reshapes, attention
// as MatMuls of two activations per head, GELU in its Erf form.
#ifndef SHOAL_MODELS_VIT_H_
#define SHOAL_MODELS_VIT_H_

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct VitConfig {
  std::string name = "vit_b_16";
  int64_t patch = 16;
  int64_t layers = 12;
  int64_t heads = 12;
  int64_t dim = 768;   // hidden features, heads x head width
  int64_t mlp = 3072;  // the MLP's inner features
  int64_t classes = 1000;
  // Q, K and V from one projection of 3 x dim columns, cut by Slice, as
  // torchvision's nn.MultiheadAttention exports them (the zoo's model has
  // three projections).
  bool packed_qkv = false;
};

// `in`: [1, 3, H, W] with H and W multiples of the patch. Its weights
// include the constants of attention's scale and of GELU (1/sqrt(head
// width); sqrt(2), 1 and 0.5), which random weights leave random.
StatusOr<Graph> BuildVit(const VitConfig& c, const Shape& in);

}  // namespace shoal

#endif  // SHOAL_MODELS_VIT_H_
