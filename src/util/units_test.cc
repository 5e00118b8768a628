#include "util/units.h"

#include <gtest/gtest.h>

#include <cmath>

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

TEST(Units, CountsToThreeSignificantDigits) {
  EXPECT_EQ(HumanCount(0), "0");
  EXPECT_EQ(HumanCount(999), "999");
  EXPECT_EQ(HumanCount(23296), "23.3 k");
  EXPECT_EQ(HumanCount(999499), "999 k");
  EXPECT_EQ(HumanCount(999500), "1.00 M");
  EXPECT_EQ(HumanCount(61100840), "61.1 M");
  EXPECT_EQ(HumanCount(714188480), "714 M");
  EXPECT_EQ(HumanCount(1814073344), "1.81 G");
  EXPECT_EQ(HumanCount(-2500), "-2.50 k");
}

TEST(Units, BitRatesAsLinksAreSold) {
  EXPECT_EQ(HumanBitRate(62.24e6), "62.24 Mbit/s");
  EXPECT_EQ(HumanBitRate(62e6), "62 Mbit/s");
  EXPECT_EQ(HumanBitRate(1e9), "1 Gbit/s");
  EXPECT_EQ(HumanBitRate(500e3), "500 kbit/s");
}

TEST(Units, Percentages) {
  EXPECT_EQ(Percent(0.018), "1.8 %");
  EXPECT_EQ(Percent(1), "100.0 %");
}

TEST(Units, PluralOnlyWhenNotOne) {
  EXPECT_EQ(Plural(1, "device"), "1 device");
  EXPECT_EQ(Plural(0, "device"), "0 devices");
  EXPECT_EQ(Plural(4, "thread"), "4 threads");
}

TEST(Units, DurationsInTheUnitThatKeepsThemShort) {
  EXPECT_EQ(HumanMs(0.025), "25.0 us");
  EXPECT_EQ(HumanMs(0.4213), "0.42 ms");
  EXPECT_EQ(HumanMs(524.72), "524.7 ms");
  EXPECT_EQ(HumanMs(999.96), "1.00 s");
  EXPECT_EQ(HumanMs(10490), "10.49 s");
  EXPECT_EQ(HumanMs(200000), "3 min 20 s");
  EXPECT_EQ(HumanMs(std::nan("")), "-");
}

}  // namespace
}  // namespace shoal
