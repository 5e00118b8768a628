// The last few events of a kind (re-plans declined or failed, requests
// that failed), kept for the dashboard, which shows them beside the
// counts: a person sees why, not only how many, without reading the log.
#ifndef SHOAL_SERVE_RECENT_EVENTS_H_
#define SHOAL_SERVE_RECENT_EVENTS_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>

namespace shoal {

class RecentEvents {
 public:
  // Keeps the newest `capacity` (at least one): a flood of failures holds
  // a bounded memory and still shows its latest.
  explicit RecentEvents(size_t capacity);

  // `event` (a JSON object) with "unix_ms", the time it is added, unless
  // it has one.
  void Add(nlohmann::json event);

  // Oldest first, as a JSON array.
  nlohmann::json List() const;

  // Every event added, the dropped ones too.
  int64_t total() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<nlohmann::json> events_;
  int64_t total_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_SERVE_RECENT_EVENTS_H_
