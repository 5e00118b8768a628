// `shoal profile` as a user runs it: counts it cannot use end with a
// non-zero exit and a message naming the flag, before any device is asked.
#include <gtest/gtest.h>

#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

std::string Profile(const std::string& args) {
  return std::string(SHOAL_BINARY) + " profile lenet5 --cluster " +
         SHOAL_SOURCE_DIR + "/examples/pi3-4.yaml " + args;
}

TEST(ProfileCmd, RoundsAndRepeatMustBePositive) {
  std::string out;
  EXPECT_NE(RunCommand(Profile("--rounds 0"), &out), 0);
  EXPECT_NE(out.find("--rounds must be >= 1"), std::string::npos) << out;
  EXPECT_NE(RunCommand(Profile("--repeat 0"), &out), 0);
  EXPECT_NE(out.find("--repeat must be >= 1"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
