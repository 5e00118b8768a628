// `shoal plan` as a user runs it.
#include <gtest/gtest.h>

#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

// Planned without links, every transfer is free: the output says so, so
// that nobody reads its predictions as a cluster's.
TEST(PlanCmd, SaysWhenLinksAreUnknown) {
  const std::string shoal = SHOAL_BINARY;
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan lenet5 --devices 2 --strategy lop", &out),
            0)
      << out;
  EXPECT_NE(out.find("links are unknown"), std::string::npos) << out;
  std::string with_links;
  ASSERT_EQ(RunCommand(shoal + " plan lenet5 --cluster " + SHOAL_SOURCE_DIR +
                           "/examples/pi3-4.yaml --strategy lop",
                       &with_links),
            0)
      << with_links;
  EXPECT_EQ(with_links.find("links are unknown"), std::string::npos)
      << with_links;
}

}  // namespace
}  // namespace shoal
