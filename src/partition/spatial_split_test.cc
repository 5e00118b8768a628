#include "partition/spatial_split.h"

#include <gtest/gtest.h>

#include "ops/window.h"

namespace shoal {
namespace {

// Brute force: the input rows output rows [a, b) read, and the padding.
StripInput BruteForce(const Window1D& w, int64_t a, int64_t b) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t o = a; o < b; ++o) {
    for (int64_t k = 0; k < w.kernel; ++k) {
      const int64_t i = o * w.stride - w.pad_begin + k * w.dilation;
      lo = std::min(lo, i);
      hi = std::max(hi, i + 1);
    }
  }
  StripInput s;
  s.begin = std::max<int64_t>(lo, 0);
  s.end = std::min(hi, w.in_size);
  s.pad_begin = s.begin - lo;
  s.pad_end = hi - s.end;
  return s;
}

TEST(SpatialSplit, InputRowsMatchBruteForceEverywhere) {
  for (int64_t k = 1; k <= 5; ++k)
    for (int64_t s = 1; s <= 3; ++s)
      for (int64_t d = 1; d <= 2; ++d)
        for (int64_t p = 0; p <= k / 2 + 1; ++p)
          for (int64_t in = 4; in <= 11; ++in) {
            Window1D w{k, s, d, p, p, in};
            const int64_t out = WindowOutputSize(in, k, s, p, p, d, false);
            for (int64_t a = 0; a < out; ++a)
              for (int64_t b = a + 1; b <= out; ++b) {
                StripInput got = InputRowsFor(w, a, b),
                           want = BruteForce(w, a, b);
                ASSERT_EQ(got.begin, want.begin);
                ASSERT_EQ(got.end, want.end);
                ASSERT_EQ(got.pad_begin, want.pad_begin);
                ASSERT_EQ(got.pad_end, want.pad_end);
                // The strip with its padding yields exactly b - a rows.
                ASSERT_EQ(
                    WindowOutputSize(got.end - got.begin, k, s, got.pad_begin,
                                     got.pad_end, d, false),
                    b - a);
              }
          }
}

// Every layout covers the output exactly once, bands follow the shares of
// their devices, and each tile's columns its share within the band.
TEST(SpatialSplit, TileLayoutsCoverTheOutputExactlyOnce) {
  const std::vector<std::vector<double>> clusters = {
      {1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {3, 1, 1, 2, 2}, {1, 2, 3}};
  for (const auto& raw : clusters) {
    double sum = 0;
    for (double x : raw) sum += x;
    std::vector<double> shares;
    for (double x : raw) shares.push_back(x / sum);
    for (int per_band = 1; per_band <= int(shares.size()); ++per_band) {
      for (int64_t rows : {7, 14, 56}) {
        for (int64_t cols : {5, 14}) {
          auto layout = TileLayout(rows, cols, shares, per_band);
          const int bands = (int(shares.size()) + per_band - 1) / per_band;
          if (rows < bands || cols < per_band) {
            EXPECT_FALSE(layout.ok());
            continue;
          }
          ASSERT_TRUE(layout.ok()) << layout.status().message();
          ASSERT_EQ(layout->size(), shares.size());
          std::vector<int> covered(rows * cols, 0);
          for (const TileBounds& t : *layout) {
            const int64_t cb = t.col_end < 0 ? 0 : t.col_begin;
            const int64_t ce = t.col_end < 0 ? cols : t.col_end;
            ASSERT_LT(t.row_begin, t.row_end);
            ASSERT_LT(cb, ce);
            EXPECT_EQ(t.col_end < 0, per_band == 1);
            for (int64_t r = t.row_begin; r < t.row_end; ++r)
              for (int64_t c = cb; c < ce; ++c) ++covered[r * cols + c];
          }
          for (int c : covered) ASSERT_EQ(c, 1);
          // The first device of each band starts a band at column 0; the
          // rows of a band follow its devices' shares (to within a row).
          for (int d = 0; d < int(shares.size()); d += per_band) {
            const TileBounds& t = (*layout)[d];
            double band = 0;
            for (int k = d; k < std::min<int>(shares.size(), d + per_band); ++k)
              band += shares[k];
            EXPECT_LE(std::abs(double(t.row_end - t.row_begin) - band * rows),
                      1.0 + 1e-9);
            if (per_band > 1) {
              EXPECT_EQ(t.col_begin, 0);
            }
          }
        }
      }
    }
  }
}

TEST(SpatialSplit, TileShapesParseAndRefuseOthers) {
  EXPECT_EQ(ParseTileShape("strips").value(), TileShape::kStrips);
  EXPECT_EQ(ParseTileShape("2d").value(), TileShape::k2D);
  auto bad = ParseTileShape("auto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("strips or 2d"), std::string::npos);
}

}  // namespace
}  // namespace shoal
