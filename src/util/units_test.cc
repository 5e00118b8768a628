#include "util/units.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(Units, BytesInTheLargestUnitUnderThem) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(5 << 20), "5.0 MiB");
  EXPECT_EQ(HumanBytes(int64_t{3} << 29), "1.50 GiB");
  EXPECT_EQ(MiB(int64_t{3} << 29), "1536.0 MiB");
  EXPECT_EQ(MiB(0), "0.0 MiB");
}

}  // namespace
}  // namespace shoal
