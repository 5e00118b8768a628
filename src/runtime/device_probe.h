// Finds a device that stopped answering while a request needs it, in about
// a second. While requests are in flight, one thread asks each device they
// run on for Health, one call at a time, `interval_ms` after the last
// answer; a call left unanswered for `deadline_ms` declares the device
// silent. A frozen process (SIGSTOP) or a host gone from the network keeps
// its connections open, so the connection watch (connection_watch.h) finds
// it only when keepalive gives up (kKeepaliveTimeMs + kKeepaliveTimeoutMs,
// 3.5 s), and that timeout cannot be shorter without dropping live
// connections whose pings queue behind large messages. Idle devices are not
// asked: keepalive finds them.
#ifndef SHOAL_RUNTIME_DEVICE_PROBE_H_
#define SHOAL_RUNTIME_DEVICE_PROBE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "shoal.grpc.pb.h"

namespace shoal {

struct ProbeTiming {
  int interval_ms = 250;   // after an answer, the next call
  int deadline_ms = 1000;  // unanswered this long: silent
  // A call is not trusted to have timed out when the probing thread itself
  // woke this much later than it asked to during the call: then this
  // process, not the device, was starved (a loaded host), and it asks
  // again.
  int stall_ms = 200;
};

class DeviceProbe {
 public:
  // Per device: whether a request in flight runs a task there. Called on
  // the probe's thread a few times a second.
  using Needed = std::function<std::vector<bool>()>;
  // Called on the probe's thread with the device's index and what
  // happened, in words.
  using OnSilent = std::function<void(int device, const std::string& what)>;

  // `stubs` outlive the probe.
  DeviceProbe(std::vector<rpc::Worker::Stub*> stubs, Needed needed,
              OnSilent on_silent, ProbeTiming timing = {});
  // Cancels the calls in flight and stops the thread.
  ~DeviceProbe();

  DeviceProbe(const DeviceProbe&) = delete;
  DeviceProbe& operator=(const DeviceProbe&) = delete;

  // Health calls made so far, for tests.
  int64_t calls() const { return calls_; }

 private:
  void Loop();

  const std::vector<rpc::Worker::Stub*> stubs_;
  const Needed needed_;
  const OnSilent on_silent_;
  const ProbeTiming timing_;
  grpc::CompletionQueue cq_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> calls_{0};
  std::thread thread_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_DEVICE_PROBE_H_
