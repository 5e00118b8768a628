#include "runtime/device_probe.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "runtime/wire.h"

namespace shoal {

namespace {

using Clock = std::chrono::steady_clock;

// The longest the thread sleeps, so that a new request's devices are
// asked soon and the destructor is not kept waiting.
constexpr auto kMaxWait = std::chrono::milliseconds(100);

// One Health call in flight.
struct Call {
  int device = 0;
  Clock::time_point sent;
  grpc::ClientContext ctx;
  rpc::HealthReply reply;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<rpc::HealthReply>> rpc;
};

}  // namespace

DeviceProbe::DeviceProbe(std::vector<rpc::Worker::Stub*> stubs, Needed needed,
                         OnSilent on_silent, ProbeTiming timing)
    : stubs_(std::move(stubs)),
      needed_(std::move(needed)),
      on_silent_(std::move(on_silent)),
      timing_(timing) {
  thread_ = std::thread([this] { Loop(); });
}

DeviceProbe::~DeviceProbe() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void DeviceProbe::Loop() {
  const size_t n = stubs_.size();
  const auto interval = std::chrono::milliseconds(timing_.interval_ms);
  const auto stall = std::chrono::milliseconds(timing_.stall_ms);
  std::vector<std::unique_ptr<Call>> out(n);  // per device, in flight
  std::vector<Clock::time_point> next(n);     // per device, earliest call
  size_t in_flight = 0;
  // The last time this thread woke `stall` or more after it asked to.
  Clock::time_point stalled;
  while (!stop_) {
    const auto now = Clock::now();
    const std::vector<bool> need = needed_();
    auto wake = now + kMaxWait;
    for (size_t d = 0; d < n && d < need.size(); ++d) {
      if (!need[d] || out[d]) continue;
      if (now < next[d]) {
        wake = std::min(wake, next[d]);
        continue;
      }
      auto c = std::make_unique<Call>();
      c->device = static_cast<int>(d);
      c->sent = now;
      c->ctx.set_deadline(DeadlineIn(timing_.deadline_ms));
      rpc::HealthRequest q;
      q.set_protocol(kProtocolVersion);
      c->rpc = stubs_[d]->PrepareAsyncHealth(&c->ctx, q, &cq_);
      c->rpc->StartCall();
      c->rpc->Finish(&c->reply, &c->status, c.get());
      out[d] = std::move(c);
      ++in_flight;
      ++calls_;
    }
    void* tag = nullptr;
    bool ok = false;
    // gRPC takes a system_clock deadline.
    const auto got = cq_.AsyncNext(
        &tag, &ok,
        std::chrono::system_clock::now() +
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                wake - Clock::now()));
    const auto woke = Clock::now();
    if (woke - wake >= stall) stalled = woke;
    if (got != grpc::CompletionQueue::GOT_EVENT) continue;
    Call* c = static_cast<Call*>(tag);
    const int d = c->device;
    if (c->status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
        stalled < c->sent && !stop_) {
      on_silent_(d, "did not answer a Health call within " +
                        std::to_string(timing_.deadline_ms) +
                        " ms while a request needed it (the worker is frozen "
                        "or stopped, or its host left the network)");
    }
    // Any other outcome is not this probe's to judge: a refused or
    // dropped connection is the connection watch's.
    next[d] = Clock::now() + interval;
    out[d].reset();
    --in_flight;
  }
  for (auto& c : out) {
    if (c) c->ctx.TryCancel();
  }
  void* tag = nullptr;
  bool ok = false;
  for (; in_flight > 0 && cq_.Next(&tag, &ok); --in_flight) {
  }
  cq_.Shutdown();
  while (cq_.Next(&tag, &ok)) {
  }
}

}  // namespace shoal
