// `shoal bench` as a user runs it: limits said before anything starts.
#include <gtest/gtest.h>

#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

// One client thread per request in flight: 40 000 once aborted the process
// ("terminate called without an active exception"). Above the limit it is
// an error naming the limit, before the plan or cluster is read.
TEST(BenchCmd, ConcurrencyAboveTheLimitIsAnErrorNotAnAbort) {
  std::string out;
  const int rc = onnx_test::RunCommand(
      std::string(SHOAL_BINARY) +
          " bench --plan missing.json --cluster missing.yaml --concurrency "
          "40000",
      &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("limit of 1024 requests in flight"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace shoal
