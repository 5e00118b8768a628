#include "lcp/splitter.h"

#include <gtest/gtest.h>

#include "models/zoo.h"

namespace shoal {
namespace {

Graph Zoo(const std::string& name) {
  const ZooEntry* e = Zoo::Global().Find(name);
  return e->build(e->input_shape).value();
}

TEST(SplitterTest, DividesUntilOneBranchFits) {
  const Graph g = Zoo("resnet18");
  // 1 GB and the whole model's MACs: the original fits.
  auto r = RunSplitter(g, {int64_t{1} << 30, int64_t{1} << 40, 2, 0});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.branches, 1);
  // A MAC budget only an eighth-width branch meets.
  auto s8 = RunSplitter(g, {int64_t{1} << 30, 60'000'000, 2, 0});
  ASSERT_TRUE(s8.ok()) << s8.status().ToString();
  EXPECT_EQ(s8->summary.branches, 8);
  EXPECT_EQ(s8->steps.size(), 4u);
  EXPECT_LE(s8->summary.macs_per_branch, 60'000'000);
  // Division factor 4 jumps from 4 to 16.
  auto s16 = RunSplitter(g, {int64_t{1} << 30, 60'000'000, 4, 0});
  ASSERT_TRUE(s16.ok());
  EXPECT_EQ(s16->summary.branches, 16);
}

TEST(SplitterTest, ImpossibleBudgetErrorsWithNumbers) {
  auto r = RunSplitter(Zoo("lenet5"), {100, 100, 2, 0});
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().ToString();
  EXPECT_NE(m.find("no branch count meets the budget of 100 bytes"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("K=64"), std::string::npos) << m;
  EXPECT_FALSE(RunSplitter(Zoo("lenet5"), {100, 100, 1, 0}).ok());
}

}  // namespace
}  // namespace shoal
