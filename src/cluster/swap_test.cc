#include "cluster/swap.h"

#include <gtest/gtest.h>

#include "cluster/board.h"

namespace shoal {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

int64_t Dense(int64_t in, int64_t out) { return in * out * 4; }

const FrameworkMemory& Collab() {
  const FrameworkMemory* fm = FrameworkMemoryOf(FindBoard("pi3-collab"));
  EXPECT_NE(fm, nullptr);
  return *fm;
}

// What the paper says swapped on its 1 GB Pi 3 and what did not
// (collaborative-execution paper §5 and §6).
TEST(Swap, ThePapersRuleSplitsTheFirstDenseLayersOnly) {
  const FrameworkMemory& fm = Collab();
  EXPECT_TRUE(LayerMustSplit(fm, kGiB, Dense(9216, 4096)));       // AlexNet fc6
  EXPECT_TRUE(LayerMustSplit(fm, kGiB, Dense(25088, 4096)));      // VGG16 fc6
  EXPECT_TRUE(LayerMustSplit(fm, kGiB, Dense(8192, 4096)));       // C3D fc6
  EXPECT_FALSE(LayerMustSplit(fm, kGiB, Dense(4096, 4096)));      // their fc7
  EXPECT_FALSE(LayerMustSplit(fm, kGiB, 3 * 3 * 512 * 512 * 4));  // a conv
  // A board given more memory does not swap them.
  EXPECT_FALSE(LayerMustSplit(fm, 4 * kGiB, Dense(25088, 4096)));
  EXPECT_FALSE(LayerMustSplit(fm, 0, Dense(25088, 4096)));  // unlimited
  // The budget step 2 groups within holds fc7 but not fc6.
  EXPECT_GT(WeightBudget(fm, kGiB), Dense(4096, 4096));
  EXPECT_LT(WeightBudget(fm, kGiB), Dense(9216, 4096));
}

TEST(Swap, OnlyWhatDoesNotFitIsPaged) {
  const FrameworkMemory& fm = Collab();
  const int64_t usable = UsableBytes(fm, kGiB);
  EXPECT_EQ(SwapSeconds(fm, kGiB, usable), 0);
  EXPECT_DOUBLE_EQ(SwapSeconds(fm, kGiB, usable + 8 * kMiB),
                   8 * kMiB / fm.swap_bytes_per_s);
  EXPECT_EQ(SwapSeconds(fm, 0, usable + 8 * kMiB), 0);
  // VGG16's first dense layer alone takes minutes, as the paper found.
  const int64_t fc6 = Dense(25088, 4096);
  EXPECT_GT(SwapSeconds(fm, kGiB, FootprintBytes(fm, fc6, fc6, 0)), 60);
}

TEST(Swap, OnlyThePapersBoardSwaps) {
  for (const auto& b : BoardClasses()) {
    EXPECT_EQ(FrameworkMemoryOf(&b) != nullptr, b.name == "pi3-collab")
        << b.name;
  }
  EXPECT_EQ(FrameworkMemoryOf(nullptr), nullptr);
}

}  // namespace
}  // namespace shoal
