// Usage errors as a user meets them: one exit code, CLI11's message, and a
// "did you mean" where a flag, subcommand or value is a typo away.
#include <gtest/gtest.h>

#include <string>

#include "cli/commands.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

struct Case {
  const char* args;
  const char* hint;  // "" for none
};

TEST(UsageErrors, OneExitCodeAndDidYouMean) {
  const std::string shoal = SHOAL_BINARY;
  for (const Case& c :
       {Case{"plan lenet5 --devices 2 --stratgy lop",
             "did you mean '--strategy'"},
        Case{"plna lenet5", "did you mean 'plan'"},
        Case{"plan lenet5 --devices 2 --objective latncy",
             "did you mean 'latency'"},
        Case{"cluster dwn x.yaml", "did you mean 'down'"},
        Case{"infer lenet5 --random-seed 1", "did you mean '--input-seed'"},
        Case{"plan lenet5 --devices 2 --zzzzzzzz", ""}, Case{"plan", ""}}) {
    SCOPED_TRACE(c.args);
    std::string out;
    EXPECT_EQ(RunCommand(shoal + " " + c.args, &out), kUsageExitCode) << out;
    if (*c.hint) {
      EXPECT_NE(out.find(c.hint), std::string::npos) << out;
    } else {
      EXPECT_EQ(out.find("did you mean"), std::string::npos) << out;
    }
  }
  std::string out;
  EXPECT_EQ(RunCommand(shoal + " plan --help", &out), 0) << out;
}

}  // namespace
}  // namespace shoal
