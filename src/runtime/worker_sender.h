// A worker's sending side: a queue of tensor messages and the threads that
// take them in turn, wait out the device's link (LinkShaper), and send them
// to a peer or, for the model's output, to the request's coordinator. It
// keeps the channels to coordinators, and sends a request's abort.
#ifndef SHOAL_RUNTIME_WORKER_SENDER_H_
#define SHOAL_RUNTIME_WORKER_SENDER_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plan/broadcast.h"
#include "runtime/deployment.h"
#include "runtime/link_shaper.h"
#include "runtime/worker_core.h"
#include "shoal.grpc.pb.h"

namespace shoal {

struct OutgoingMessage {
  std::shared_ptr<Deployment> dep;
  RequestMeta meta;
  int dst_device = 0;  // -1: the coordinator (model output)
  rpc::TensorMessage msg;
  std::chrono::steady_clock::time_point queued;
  // On an emulated board: when the task that made it finished in board
  // time (task_scheduler.h), the link's earliest start. None: when sent.
  std::chrono::steady_clock::time_point ready;
};

class WorkerSender {
 public:
  using Clock = std::chrono::steady_clock;
  // A channel to a coordinator at an address (with TLS, one that must show
  // a coordinator's certificate, whatever address a request names).
  using DialCoordinator =
      std::function<std::shared_ptr<grpc::Channel>(const std::string&)>;

  // Enough that chunks of a broadcast (plan/broadcast.h), each waiting out
  // the link's latency in its sender, keep the link busy while this device
  // also forwards chunks and sends its own outputs. The simulator models as
  // many (SimOptions::sender_threads).
  static constexpr int kThreads = 8;
  // Channels to coordinators kept: each `shoal serve` plan generation has
  // a reply address of its own, and the least recently used beyond these
  // are dropped, so a long-running serve that re-plans often does not grow
  // a worker.
  static constexpr size_t kMaxReplyStubs = 8;

  WorkerSender(WorkerCore core, LinkShaper* shaper, DialCoordinator dial);
  ~WorkerSender() { Stop(); }

  void Start();
  // Stops the threads; what is still queued is not sent.
  void Stop();

  void Queue(OutgoingMessage o);
  // Queues the messages for `hops` of a broadcast: the chunks of
  // `header`'s data, or, with readdress_only, `header` itself (a chunk
  // being forwarded) to each.
  // `ready` as OutgoingMessage's.
  void QueueHops(const std::shared_ptr<Deployment>& d, const RequestMeta& meta,
                 const std::vector<RelayHop>& hops, rpc::TensorMessage header,
                 bool readdress_only, Clock::time_point ready = {});

  // Tells the request's coordinator that it failed here; best effort.
  void SendAbort(const RequestMeta& meta, const std::string& error);

  // Messages queued or being sent: their spans are not recorded yet.
  int unsent() const { return unsent_.load(); }
  // Waits until none is, or until `until`.
  void WaitUntilSent(Clock::time_point until) const;

 private:
  void Loop();
  void SendOne(OutgoingMessage& o);
  std::shared_ptr<rpc::Worker::Stub> ReplyStub(const std::string& addr);

  const WorkerCore core_;
  LinkShaper* const shaper_;
  const DialCoordinator dial_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::deque<OutgoingMessage> queue_;
  std::atomic<int> unsent_{0};
  struct ReplyChannel {
    std::shared_ptr<rpc::Worker::Stub> stub;
    Clock::time_point used;
  };
  std::mutex stubs_mu_;
  std::map<std::string, ReplyChannel> reply_stubs_;  // by address
  std::vector<std::thread> threads_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_WORKER_SENDER_H_
