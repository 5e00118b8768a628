// Test helpers for the distributed runtime in this process: the one-device
// reference output, and workers on free ports with the cluster naming them.
// Shared by the runtime and serve tests.
#ifndef SHOAL_RUNTIME_RUNTIME_TEST_UTIL_H_
#define SHOAL_RUNTIME_RUNTIME_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "engine/run_whole.h"
#include "runtime/wire.h"
#include "runtime/worker.h"

namespace shoal::testing {

// RunWhole's output; on an error the test fails and the tensor is empty,
// which no MaxRelDiff comparison accepts.
inline Tensor RunWholeOrFail(const Model& m, const Tensor& x) {
  auto out = RunWhole(m, x);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::move(out).value() : Tensor();
}

// Sends `bytes` bytes of std::mt19937(seed) noise to 127.0.0.1:port over
// raw TCP and closes: what a confused client or a port scan would send.
inline void SendGarbage(int port, size_t bytes, uint32_t seed) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  std::mt19937 rng(seed);
  std::string junk(bytes, '\0');
  for (auto& ch : junk) ch = static_cast<char>(rng());
  (void)!write(fd, junk.data(), junk.size());
  close(fd);
}

// Asks the worker at `address` for its health, with a 3 s deadline.
inline grpc::Status Health(const std::string& address,
                           rpc::HealthReply* reply) {
  auto stub = rpc::Worker::NewStub(MakeChannel(address, 1 << 20));
  rpc::HealthRequest hq;
  hq.set_protocol(kProtocolVersion);
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(3000));
  return stub->Health(&ctx, hq, reply);
}

// Workers in this process on free ports, named dev0, dev1, ...
struct LocalWorkers {
  std::vector<std::unique_ptr<Worker>> workers;
  Cluster cluster;  // one device per worker, in order
  std::vector<int64_t> memory;

  // `memory_bytes`: each worker's deployment budget; 0: unlimited.
  // `restartable`: the workers listen below the kernel's ephemeral ports
  // (32768 and up, net.ipv4.ip_local_port_range), so that while Restart()
  // has one down no other test's worker on port 0, nor any outgoing
  // connection, is handed its port.
  explicit LocalWorkers(int n, int64_t memory_bytes = 0,
                        bool restartable = false) {
    for (int i = 0; i < n; ++i) Add(memory_bytes, restartable);
  }
  // Each worker with `base`'s options but its name and port.
  LocalWorkers(int n, const WorkerOptions& base) : base(base) {
    for (int i = 0; i < n; ++i) Add(base.memory_bytes);
  }
  WorkerOptions base;
  void Add(int64_t memory_bytes = 0, bool restartable = false) {
    WorkerOptions o = base;
    o.name = "dev" + std::to_string(workers.size());
    o.memory_bytes = memory_bytes;
    StatusOr<std::unique_ptr<Worker>> w = Unavailable("no port tried");
    if (restartable) {
      // Ports 20000..32767, from a start of this process's own.
      const int start = static_cast<int>(getpid() * 7919 % 12768);
      for (int k = 0; k < 200; ++k) {
        o.listen = "127.0.0.1:" + std::to_string(20000 + (start + k) % 12768);
        w = Worker::Start(o);
        if (w.ok()) break;
      }
    } else {
      w = Worker::Start(o);
    }
    ASSERT_TRUE(w.ok()) << w.status().message();
    DeviceSpec d;
    d.name = o.name;
    d.address = "127.0.0.1:" + std::to_string(w.value()->port());
    cluster.devices.push_back(d);
    workers.push_back(std::move(w).value());
    memory.push_back(memory_bytes);
  }
  // Stops worker i and starts a fresh one on the same port, as an operator
  // would restart a device.
  void Restart(int i) {
    workers[i].reset();
    WorkerOptions o = base;
    o.name = cluster.devices[i].name;
    o.listen = cluster.devices[i].address;
    o.memory_bytes = memory[i];
    auto w = Worker::Start(o);
    ASSERT_TRUE(w.ok()) << w.status().message();
    workers[i] = std::move(w).value();
  }
};

}  // namespace shoal::testing

#endif  // SHOAL_RUNTIME_RUNTIME_TEST_UTIL_H_
