// Watches the connections of a set of gRPC channels from one thread and
// says when one is lost: a connection that was up dropped (the peer process
// ended and its kernel closed the socket, or a keepalive ping went
// unanswered: runtime/wire.h), or an attempt to connect failed. An idle
// channel is asked to connect, so a peer that went down between calls is
// found as well. The coordinator fails the requests that need a lost device
// at once instead of at their deadline.
#ifndef SHOAL_RUNTIME_CONNECTION_WATCH_H_
#define SHOAL_RUNTIME_CONNECTION_WATCH_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace shoal {

class ConnectionWatch {
 public:
  // Called on the watch's thread with the channel's index and what
  // happened, in words ("its connection dropped", ...).
  using OnLost = std::function<void(int index, const std::string& what)>;

  ConnectionWatch(std::vector<std::shared_ptr<grpc::Channel>> channels,
                  OnLost on_lost);
  // Stops the thread (within one poll interval).
  ~ConnectionWatch();

  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;

 private:
  void Arm(int i, grpc_connectivity_state from);
  void Loop();

  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  OnLost on_lost_;
  grpc::CompletionQueue cq_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_CONNECTION_WATCH_H_
