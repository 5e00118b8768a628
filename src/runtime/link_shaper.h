// An emulated network link applied to what a process sends: a token bucket
// at the link's bandwidth (messages queue behind each other) plus its
// one-way latency. User space, so it needs no root and no tc.
//
// With a shared medium (`network: {medium: shared}`, cluster/cluster.h),
// every emulated device's sends also queue on one channel whose clock lives
// in a file all the worker processes of `cluster up` map: a message holds
// the channel for its airtime (twice its time at the channel's rate, up to
// the access point and down), behind what any device already holds.
#ifndef SHOAL_RUNTIME_LINK_SHAPER_H_
#define SHOAL_RUNTIME_LINK_SHAPER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "cluster/cluster.h"
#include "util/status.h"

namespace shoal {

// One radio channel shared by processes on this host: the time (steady
// clock, nanoseconds; CLOCK_MONOTONIC, the same in every process) until
// which the channel is taken, in a file each process maps.
class SharedMedium {
 public:
  // Opens (creating it if missing) the channel's file. `medium.shared`
  // must be set, with a positive bandwidth.
  static StatusOr<std::shared_ptr<SharedMedium>> Open(const std::string& path,
                                                      Medium medium);
  ~SharedMedium();
  SharedMedium(const SharedMedium&) = delete;
  SharedMedium& operator=(const SharedMedium&) = delete;

  const Medium& medium() const { return medium_; }
  const std::string& path() const { return path_; }
  // Takes the channel for `seconds` from `earliest` or when it is next
  // free, whichever is later; returns when that time ends.
  std::chrono::steady_clock::time_point Hold(
      std::chrono::steady_clock::time_point earliest, double seconds);

 private:
  SharedMedium(std::string path, Medium medium, int64_t* clock)
      : path_(std::move(path)), medium_(medium), clock_(clock) {}
  std::string path_;
  Medium medium_;
  int64_t* clock_;  // mapped; accessed only through std::atomic_ref
};

class LinkShaper {
 public:
  explicit LinkShaper(Link link, std::shared_ptr<SharedMedium> medium = nullptr)
      : link_(link), medium_(std::move(medium)) {}
  bool active() const {
    return link_.bandwidth_bps > 0 || link_.latency_s > 0 || medium_;
  }
  // Blocks the caller until `bytes` would have crossed the link: behind the
  // bytes already queued (on this link and, with a medium, on the channel;
  // the message holds both for the longer of its times on them), then the
  // latency.
  void Transmit(int64_t bytes) {
    Transmit(bytes, std::chrono::steady_clock::now());
  }
  // The same from `earliest` (an emulated board's time, perhaps past): the
  // time the bytes and the latency are through, which it waits for.
  std::chrono::steady_clock::time_point Transmit(
      int64_t bytes, std::chrono::steady_clock::time_point earliest);

 private:
  Link link_;
  std::shared_ptr<SharedMedium> medium_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point free_at_{};
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_LINK_SHAPER_H_
