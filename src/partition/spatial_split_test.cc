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

}  // namespace
}  // namespace shoal
