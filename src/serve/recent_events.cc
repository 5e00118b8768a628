#include "serve/recent_events.h"

#include <algorithm>
#include <chrono>

namespace shoal {

RecentEvents::RecentEvents(size_t capacity)
    : capacity_(std::max<size_t>(1, capacity)) {}

void RecentEvents::Add(nlohmann::json event) {
  if (!event.contains("unix_ms")) {
    event["unix_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  }
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(event));
  if (events_.size() > capacity_) events_.pop_front();
  ++total_;
}

nlohmann::json RecentEvents::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : events_) out.push_back(e);
  return out;
}

int64_t RecentEvents::total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_;
}

}  // namespace shoal
