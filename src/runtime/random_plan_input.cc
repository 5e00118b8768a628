#include "runtime/random_plan_input.h"

#include "graph/random_input.h"

namespace shoal {

Tensor RandomPlanInput(const Plan& p, uint64_t seed,
                       std::optional<ImageNormalization>* pixels) {
  if (p.input_pixels && p.input_shape.size() == 4) {
    *pixels = DefaultNormalization(p.input_shape[1]);
    return RandomImage(p.input_shape, seed, **pixels);
  }
  pixels->reset();
  return RandomInput(p.input_shape, seed);
}

}  // namespace shoal
