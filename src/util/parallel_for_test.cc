#include "util/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace shoal {
namespace {

TEST(ParallelFor, CallsEachIndexOnce) {
  for (size_t n : {0, 1, 7, 1000}) {
    std::vector<std::atomic<int>> seen(n);
    ParallelFor(n, 4, [&](size_t i) { seen[i]++; });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << n << " " << i;
  }
}

// 5 000 items that each wait a little run on at most 8 distinct threads,
// the caller's among them, and never more than 8 at once.
TEST(ParallelFor, RunsOnAtMostMaxThreads) {
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> now{0}, most{0};
  ParallelFor(5000, 8, [&](size_t) {
    const int k = ++now;
    int m = most;
    while (k > m && !most.compare_exchange_weak(m, k)) {
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    --now;
  });
  EXPECT_LE(ids.size(), 8u);
  EXPECT_LE(most.load(), 8);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);
}

TEST(ParallelFor, ZeroThreadsMeansTheCallerAlone) {
  std::set<std::thread::id> ids;
  ParallelFor(10, 0, [&](size_t) { ids.insert(std::this_thread::get_id()); });
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(*ids.begin(), std::this_thread::get_id());
}

}  // namespace
}  // namespace shoal
