// Test helpers: run a graph on both backends and compare (header-only, used
// by executor_test.cc and zoo_backends_slowtest.cc). Here, not in engine/,
// because the weights are models/'s RandomWeights.
#ifndef SHOAL_RUNTIME_BACKEND_COMPARE_TEST_UTIL_H_
#define SHOAL_RUNTIME_BACKEND_COMPARE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "engine/backend_run_test_util.h"
#include "engine/executor.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/zoo.h"

namespace shoal {

// `backend` (oneDNN or XNNPACK) against the reference backend, within
// 1e-4 relative; `stats`, if given, gets the fast executor's.
inline void ExpectBackendsAgree(const Graph& g, uint64_t seed,
                                Backend backend = Backend::kOneDnn,
                                ExecutorStats* stats = nullptr) {
  WeightStore w = RandomWeights(g, seed);
  std::vector<Tensor> in;
  for (const auto& name : g.inputs)
    in.push_back(RandomInput(g.FindTensor(name)->shape, seed));
  ExecutorStats st;
  auto fast = RunWith(g, w, backend, in, &st);
  auto ref = RunWith(g, w, Backend::kReference, in);
  ASSERT_EQ(fast.size(), ref.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    ASSERT_EQ(fast[i].shape, ref[i].shape);
    EXPECT_LE(MaxRelDiff(fast[i], ref[i]), 1e-4)
        << g.name << " output " << i << " on " << BackendName(backend);
  }
  EXPECT_GT(backend == Backend::kXnnpack ? st.xnnpack_steps : st.onednn_steps,
            0)
      << g.name;
  if (stats) *stats = st;
}

}  // namespace shoal

#endif  // SHOAL_RUNTIME_BACKEND_COMPARE_TEST_UTIL_H_
