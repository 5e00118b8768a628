#include "partition/scheme.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(SchemeTest, NamesRoundTrip) {
  const char* names[] = {"whole",   "lop",    "lip",     "fuse1",   "fuse2",
                         "channel", "filter", "spatial", "pipeline"};
  for (const char* name : names) {
    auto s = ParseScheme(name);
    ASSERT_TRUE(s.ok()) << name;
    EXPECT_STREQ(SchemeName(*s), name);
  }
  EXPECT_STREQ(SchemeName(Scheme::kFuse2), "fuse2");
}

TEST(SchemeTest, UnknownNameListsValidOnes) {
  auto s = ParseScheme("fuse");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("'fuse'"), std::string::npos);
  EXPECT_NE(s.status().message().find("whole, lop, lip, fuse1, fuse2"),
            std::string::npos);
  EXPECT_FALSE(ParseScheme("LOP").ok());  // names are lower case
}

}  // namespace
}  // namespace shoal
