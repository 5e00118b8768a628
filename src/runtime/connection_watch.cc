#include "runtime/connection_watch.h"

#include <chrono>
#include <cstdint>

namespace shoal {

namespace {

// Each watch ends after this long without a change and is armed again: the
// destructor waits at most this long for the thread.
constexpr auto kPoll = std::chrono::milliseconds(200);

}  // namespace

ConnectionWatch::ConnectionWatch(
    std::vector<std::shared_ptr<grpc::Channel>> channels, OnLost on_lost)
    : channels_(std::move(channels)), on_lost_(std::move(on_lost)) {
  for (size_t i = 0; i < channels_.size(); ++i) {
    Arm(static_cast<int>(i), channels_[i]->GetState(/*try_to_connect=*/true));
  }
  thread_ = std::thread([this] { Loop(); });
}

ConnectionWatch::~ConnectionWatch() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ConnectionWatch::Arm(int i, grpc_connectivity_state from) {
  // The state seen is carried in the tag: the event says it changed since.
  const intptr_t tag = (static_cast<intptr_t>(i) << 8) | from;
  channels_[i]->NotifyOnStateChange(from,
                                    std::chrono::system_clock::now() + kPoll,
                                    &cq_, reinterpret_cast<void*>(tag));
}

void ConnectionWatch::Loop() {
  size_t armed = channels_.size();
  if (armed == 0) cq_.Shutdown();
  void* tag = nullptr;
  bool changed = false;
  while (cq_.Next(&tag, &changed)) {
    const intptr_t t = reinterpret_cast<intptr_t>(tag);
    const int i = static_cast<int>(t >> 8);
    const auto from = static_cast<grpc_connectivity_state>(t & 0xff);
    if (stop_) {
      if (--armed == 0) cq_.Shutdown();
      continue;
    }
    grpc_connectivity_state now = channels_[i]->GetState(false);
    if (changed) {
      // A change away from READY is a lost connection even when the
      // channel is up again by now: the peer behind it may be a restarted
      // process that knows nothing of what the old one held.
      if (from == GRPC_CHANNEL_READY) {
        on_lost_(i,
                 "its connection dropped (the worker process ended, or "
                 "its host stopped answering keepalive pings)");
      } else if (now == GRPC_CHANNEL_TRANSIENT_FAILURE) {
        on_lost_(i, "cannot be reached (connecting to it failed)");
      }
    }
    // Idle channels (a dropped connection, one never used) connect again,
    // so a device that is down keeps failing its attempts here.
    if (now == GRPC_CHANNEL_IDLE) now = channels_[i]->GetState(true);
    Arm(i, now);
  }
}

}  // namespace shoal
