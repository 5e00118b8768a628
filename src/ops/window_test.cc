#include "ops/window.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

// Reference: the number of window start positions, counted one by one.
int64_t CountWindows(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe,
                     int64_t d, bool ceil_mode) {
  const int64_t span = (k - 1) * d + 1;
  int64_t n = 0;
  for (int64_t start = -pb;; start += s) {
    bool fits = start + span <= in + pe;
    if (!ceil_mode && !fits) break;
    // ceil mode: a window may run off the end but must start inside the
    // input or the left padding.
    if (ceil_mode && (start >= in || (!fits && start + 1 > in + pe))) break;
    if (ceil_mode && !fits && n > 0 && start >= in + pb - pb) {
      if (start >= in) break;
    }
    ++n;
    if (!fits) break;
  }
  return n;
}

TEST(WindowTest, FloorModeMatchesCounting) {
  for (int64_t in = 1; in <= 20; ++in)
    for (int64_t k = 1; k <= 5; ++k)
      for (int64_t s = 1; s <= 4; ++s)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t d = 1; d <= 2; ++d) {
            if ((k - 1) * d + 1 > in + 2 * p) continue;
            EXPECT_EQ(WindowOutputSize(in, k, s, p, p, d, false),
                      CountWindows(in, k, s, p, p, d, false))
                << in << " " << k << " " << s << " " << p << " " << d;
          }
}

TEST(WindowTest, KnownLayers) {
  EXPECT_EQ(WindowOutputSize(224, 11, 4, 2, 2, 1, false), 55);  // AlexNet conv1
  EXPECT_EQ(WindowOutputSize(55, 3, 2, 0, 0, 1, false), 27);
  EXPECT_EQ(WindowOutputSize(224, 7, 2, 3, 3, 1, false), 112);  // ResNet conv1
  EXPECT_EQ(WindowOutputSize(112, 3, 2, 1, 1, 1, false), 56);
  // SqueezeNet / GoogLeNet ceil-mode pooling.
  EXPECT_EQ(WindowOutputSize(111, 3, 2, 0, 0, 1, true), 55);
  EXPECT_EQ(WindowOutputSize(112, 3, 2, 0, 0, 1, true), 56);
  EXPECT_EQ(WindowOutputSize(112, 3, 2, 0, 0, 1, false), 55);
  // The last window may not start in the right padding.
  EXPECT_EQ(WindowOutputSize(4, 2, 2, 1, 1, 1, true), 3);
  EXPECT_EQ(WindowOutputSize(5, 2, 2, 0, 0, 1, true), 3);
}

TEST(WindowTest, ResolveSamePadding) {
  Node n{"c", "Conv", {}, {}, {}};
  n.attrs.Set("auto_pad", std::string("SAME_UPPER"));
  n.attrs.Set("strides", std::vector<int64_t>{2, 2});
  auto w = ResolveWindow(n, {7, 8}, {3, 3});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->OutputSpatial({7, 8}), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(w->pad_begin, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(w->pad_end, (std::vector<int64_t>{1, 1}));
  n.attrs.Set("auto_pad", std::string("SAME_LOWER"));
  w = ResolveWindow(n, {7, 8}, {3, 3});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->pad_begin, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(w->pad_end, (std::vector<int64_t>{1, 0}));
}

TEST(WindowTest, RejectsBadGeometry) {
  Node n{"c", "Conv", {}, {}, {}};
  n.attrs.Set("strides", std::vector<int64_t>{0, 1});
  EXPECT_FALSE(ResolveWindow(n, {7, 7}, {3, 3}).ok());
  Node m{"c", "Conv", {}, {}, {}};
  EXPECT_FALSE(ResolveWindow(m, {7, 7}, {3}).ok());
}

}  // namespace
}  // namespace shoal
