// Test helper: a graph run by the executor on one backend (header-only;
// runtime/backend_compare_test_util.h compares the backends with it).
#ifndef SHOAL_ENGINE_BACKEND_RUN_TEST_UTIL_H_
#define SHOAL_ENGINE_BACKEND_RUN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "engine/executor.h"

namespace shoal {

inline std::vector<Tensor> RunWith(const Graph& g, const WeightStore& w,
                                   Backend backend,
                                   const std::vector<Tensor>& in,
                                   ExecutorStats* stats = nullptr) {
  ExecutorOptions o;
  o.backend = backend;
  auto ex = Executor::Create(g, w, o);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return {};
  std::vector<Tensor> out;
  Status s = (*ex)->Run(in, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (stats) *stats = (*ex)->stats();
  return out;
}

}  // namespace shoal

#endif  // SHOAL_ENGINE_BACKEND_RUN_TEST_UTIL_H_
