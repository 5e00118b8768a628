// Every registered op must have a reference kernel: the reference backend is
// the oracle for every other backend and the fallback of last resort.
#include <gtest/gtest.h>

#include "graph/op_registry.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

TEST(RefCoverageTest, EveryRegisteredOpHasAKernel) {
  const std::vector<std::string> ops = OpRegistry::Global().Names();
  ASSERT_FALSE(ops.empty());
  for (const std::string& op : ops) {
    EXPECT_NE(RefKernelRegistry::Global().Find(op), nullptr)
        << "op '" << op << "' has no reference kernel";
  }
}

TEST(RefCoverageTest, EveryKernelIsForARegisteredOp) {
  for (const std::string& op : RefKernelRegistry::Global().Ops()) {
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr)
        << "reference kernel for unregistered op '" << op << "'";
  }
}

}  // namespace
}  // namespace shoal
