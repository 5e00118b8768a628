// Per second, the requests `shoal serve` answered and their latency
// (median, 95th percentile, max), for the last few minutes: the history
// the dashboard draws, there from the moment the page is opened.
#ifndef SHOAL_SERVE_LATENCY_HISTORY_H_
#define SHOAL_SERVE_LATENCY_HISTORY_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace shoal {

class LatencyHistory {
 public:
  struct Point {
    int64_t unix_s = 0;                         // the second it covers
    int64_t count = 0;                          // requests answered in it
    double p50_ms = 0, p95_ms = 0, max_ms = 0;  // 0 when count is 0
  };
  using Clock = std::chrono::system_clock;

  // Keeps the last `seconds` seconds.
  explicit LatencyHistory(int seconds = 600) : seconds_(seconds) {}

  void Add(double ms, Clock::time_point now = Clock::now());
  // The finished seconds, oldest first, one per second (quiet ones with
  // count 0) up to the one before `now`.
  std::vector<Point> Points(Clock::time_point now = Clock::now());

 private:
  void RollLocked(int64_t now_s);

  const int seconds_;
  std::mutex mu_;
  int64_t current_s_ = -1;       // the second `samples_` belong to
  std::vector<double> samples_;  // of current_s_
  std::deque<Point> points_;
};

}  // namespace shoal

#endif  // SHOAL_SERVE_LATENCY_HISTORY_H_
