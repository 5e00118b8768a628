#include "util/progress_bar.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(ProgressBar, CountsAndBytesInHumanUnits) {
  ProgressBar count("bench", 20, ProgressBar::Unit::kCount, false);
  count.Update(5);
  EXPECT_EQ(
      count.Line().rfind("bench [=======                       ] 5/20", 0), 0u)
      << count.Line();
  ProgressBar bytes("deploying", 0, ProgressBar::Unit::kBytes, false);
  bytes.AddTotal(int64_t{3} << 20);
  bytes.AddTotal(int64_t{1} << 20);
  bytes.Add(int64_t{1} << 20, "pi0");
  bytes.Add(int64_t{1} << 20);
  const std::string l = bytes.Line();
  EXPECT_NE(l.find("2.0 MiB of 4.0 MiB"), std::string::npos) << l;
  EXPECT_NE(l.find("[===============               ]"), std::string::npos) << l;
  EXPECT_NE(l.find("  pi0"), std::string::npos) << l;
  // More done than the total (a total not yet known) draws a full bar.
  ProgressBar over("x", 1, ProgressBar::Unit::kCount, false);
  over.Update(3);
  EXPECT_NE(over.Line().find("[==============================] 3/"),
            std::string::npos)
      << over.Line();
}

}  // namespace
}  // namespace shoal
