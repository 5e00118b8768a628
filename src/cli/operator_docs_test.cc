// docs/operators.md is what the registries say, and every op says enough.
#include "cli/operator_docs.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace shoal {
namespace {

TEST(OperatorDocs, CheckedInFileIsCurrent) {
  const std::string path = std::string(SHOAL_SOURCE_DIR) + "/docs/operators.md";
  std::ifstream f(path);
  ASSERT_TRUE(f) << path << " is missing; write it with "
                 << "`build/shoal ops --markdown > docs/operators.md`";
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_TRUE(ss.str() == OperatorsMarkdown())
      << path << " is out of date; regenerate it with "
      << "`build/shoal ops --markdown > docs/operators.md`";
}

TEST(OperatorDocs, EveryOpHasShapesAndARow) {
  const std::string md = OperatorsMarkdown();
  for (const std::string& name : OpRegistry::Global().Names()) {
    const OpSchema* s = OpRegistry::Global().Find(name);
    EXPECT_FALSE(s->doc().empty()) << name << " has no Doc() line";
    EXPECT_NE(md.find("| " + name + " | "), std::string::npos) << name;
  }
}

TEST(OperatorDocs, SplitPhrases) {
  EXPECT_EQ(DescribeSplit(SplitFacts{}), "kept whole");
  SplitFacts conv;
  conv.by_weight = conv.spatial_halo = true;
  const std::string d = DescribeSplit(conv);
  EXPECT_NE(d.find("output channels"), std::string::npos) << d;
  EXPECT_NE(d.find("halo"), std::string::npos) << d;
  EXPECT_EQ(DescribeSplit(OpRegistry::Global().Find("Relu")->split()),
            "anywhere (elementwise)");
  EXPECT_EQ(DescribeSplit(OpRegistry::Global().Find("Softmax")->split()),
            "along any axis it does not reduce");
}

}  // namespace
}  // namespace shoal
