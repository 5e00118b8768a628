#include "partition/chain_examples.h"

#include <string>

namespace shoal {

std::vector<ChainLayer> PaperFourLayerChain() {
  const int64_t sizes[] = {4, 8, 16, 4, 4};
  std::vector<ChainLayer> chain;
  for (int l = 0; l < 4; ++l) {
    ChainLayer layer;
    layer.name = "fc" + std::to_string(l + 1);
    layer.M = sizes[l];
    layer.K = sizes[l + 1];
    layer.Q = layer.R = layer.M * layer.K;  // eq. 2
    layer.reuses_prev = l > 0;
    layer.fusable_with_next = l < 3;
    chain.push_back(layer);
  }
  return chain;
}

}  // namespace shoal
