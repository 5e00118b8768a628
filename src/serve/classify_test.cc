// The top-k classes of a classifier's output, with names where known.
#include "serve/classify.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(TopClasses, LargestFirstWithNames) {
  const Tensor y({1, 4}, {0.1f, 3, -1, 3});
  auto top = TopClasses(y, 3, {"a", "b", "c", "d"});
  ASSERT_TRUE(top.ok()) << top.status().message();
  ASSERT_EQ(top->size(), 3u);
  EXPECT_EQ((*top)[0].index, 1);  // a tie: the lower index first
  EXPECT_EQ((*top)[1].index, 3);
  EXPECT_EQ((*top)[2].index, 0);
  EXPECT_EQ((*top)[1].name, "d");
  EXPECT_EQ((*top)[0].score, 3.f);
  // Names of another count are not this model's: none given.
  top = TopClasses(y, 10, {"a", "b"});
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->size(), 4u);
  EXPECT_EQ((*top)[0].name, "");
}

TEST(TopClasses, RefusesWhatIsNotAClassifier) {
  auto top = TopClasses(Tensor({1, 3, 4, 4}), 5, {});
  ASSERT_FALSE(top.ok());
  EXPECT_NE(top.status().message().find("1x3x4x4"), std::string::npos)
      << top.status().message();
  EXPECT_FALSE(TopClasses(Tensor({1, 4}), 0, {}).ok());
}

TEST(KnownClassNames, ImageNetOnly) {
  EXPECT_EQ(KnownClassNames(1000).size(), 1000u);
  EXPECT_EQ(KnownClassNames(1000)[281], "tabby");
  EXPECT_TRUE(KnownClassNames(10).empty());
}

}  // namespace
}  // namespace shoal
