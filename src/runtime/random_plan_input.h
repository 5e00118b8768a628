// A seeded input for a plan, of the kind its first stage takes: what `shoal
// run` and `shoal bench` send when no input is given.
#ifndef SHOAL_RUNTIME_RANDOM_PLAN_INPUT_H_
#define SHOAL_RUNTIME_RANDOM_PLAN_INPUT_H_

#include <cstdint>
#include <optional>

#include "graph/weights.h"
#include "io/pixels.h"
#include "plan/plan.h"

namespace shoal {

// A random image when the plan's input is pixels (Plan::input_pixels;
// `pixels` then gets the normalisation, for CoordinatorOptions::pixels),
// random floats otherwise.
Tensor RandomPlanInput(const Plan& p, uint64_t seed,
                       std::optional<ImageNormalization>* pixels);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_RANDOM_PLAN_INPUT_H_
