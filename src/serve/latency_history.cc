#include "serve/latency_history.h"

#include <algorithm>

#include "util/stats.h"

namespace shoal {

namespace {

int64_t UnixSeconds(LatencyHistory::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch())
      .count();
}

}  // namespace

void LatencyHistory::RollLocked(int64_t now_s) {
  if (current_s_ < 0) current_s_ = now_s;
  if (now_s <= current_s_) return;
  Point p;
  p.unix_s = current_s_;
  p.count = static_cast<int64_t>(samples_.size());
  if (!samples_.empty()) {
    p.p50_ms = Quantile(samples_, 0.5);
    p.p95_ms = Quantile(samples_, 0.95);
    p.max_ms = *std::max_element(samples_.begin(), samples_.end());
  }
  points_.push_back(p);
  samples_.clear();
  // Quiet seconds in between, at most as many as are kept.
  const int64_t from = std::max(current_s_ + 1, now_s - seconds_);
  for (int64_t s = from; s < now_s; ++s) points_.push_back(Point{s});
  current_s_ = now_s;
  while (points_.size() > static_cast<size_t>(seconds_)) points_.pop_front();
}

void LatencyHistory::Add(double ms, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t s = UnixSeconds(now);
  RollLocked(s);
  // A clock stepped back: the sample joins the current second.
  samples_.push_back(ms);
}

std::vector<LatencyHistory::Point> LatencyHistory::Points(
    Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  RollLocked(UnixSeconds(now));
  return {points_.begin(), points_.end()};
}

}  // namespace shoal
