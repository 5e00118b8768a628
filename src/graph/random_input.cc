#include "graph/random_input.h"

#include <random>

namespace shoal {

Tensor RandomInput(const Shape& shape, uint64_t seed) {
  Tensor t(shape);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& v : t.data) v = nd(rng);
  return t;
}

}  // namespace shoal
