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

std::vector<ChainLayer> RandomChain(std::mt19937& rng) {
  const int n = 1 + rng() % 12;
  std::vector<ChainLayer> chain(n);
  int64_t units = 1 + rng() % 64, unit = 1 + rng() % 16;
  for (int l = 0; l < n; ++l) {
    ChainLayer& c = chain[l];
    c.name = std::string("l") + std::to_string(l);
    c.reuses_prev = l > 0 && rng() % 4 != 0;
    if (!c.reuses_prev || rng() % 3 == 0) unit = 1 + rng() % 16;
    c.m_units = units;
    c.M = units * unit;
    if (c.reuses_prev && rng() % 5 == 0) {
      const int64_t extra = 1 + rng() % 8;
      c.reuse_elements = c.M;
      c.m_units += extra;
      c.M += extra * unit;
    }
    c.k_units = 1 + rng() % 64;
    if (rng() % 3 == 0) unit = 1 + rng() % 16;
    c.K = c.k_units * unit;
    c.Q = c.m_units * c.k_units * (1 + rng() % 9);
    c.R = c.Q * unit;
    c.fusable_with_next = rng() % 3 != 0;
    units = c.k_units;
  }
  return chain;
}

std::vector<double> RandomShares(std::mt19937& rng, int n) {
  std::vector<double> shares(n);
  double sum = 0;
  for (double& s : shares) sum += s = 1 + rng() % 100;
  for (double& s : shares) s /= sum;
  return shares;
}

}  // namespace shoal
