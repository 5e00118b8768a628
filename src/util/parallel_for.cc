#include "util/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace shoal {

void ParallelFor(size_t n, size_t max_threads,
                 const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  const size_t helpers =
      n == 0 ? 0 : std::min(n, std::max<size_t>(max_threads, 1)) - 1;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < helpers; ++t) {
    try {
      threads.emplace_back(loop);
    } catch (const std::system_error&) {
      break;  // out of threads: the ones started, and this one, do it all
    }
  }
  loop();
  for (auto& t : threads) t.join();
}

}  // namespace shoal
