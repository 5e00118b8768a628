// Transport overhead of shoal's runtime on unshaped loopback, with two real
// `shoal worker` processes:
//  - bytes on the wire per tensor: dev0 sends a tensor of S bytes to dev1
//    through a counting TCP relay; every byte of the connection (HTTP/2
//    frames, gRPC and protobuf framing, the reply) against the payload S;
//  - the added latency of one hop: requests through a plan whose two tiny
//    layers (a 64 B tensor) run on one device, and on two (one more
//    worker-to-worker message); the difference of the medians.
// Usage: shoal_transport_bench SHOAL_BINARY [REQUESTS]; prints markdown.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <thread>

#include "graph/shape_inference.h"
#include "partition/plan_builder.h"
#include "runtime/coordinator.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "transport_bench: " << what << "\n";
  std::exit(1);
}

// A `shoal worker` child on a port the kernel picks.
struct WorkerProc {
  pid_t pid = 0;
  int port = 0;
  WorkerProc(const std::string& binary, const std::string& name) {
    const std::string log = "/tmp/shoal-transport-bench-" +
                            std::to_string(getpid()) + "-" + name + ".log";
    const pid_t parent = getpid();
    pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl(binary.c_str(), binary.c_str(), "worker", "--listen", "127.0.0.1:0",
            "--name", name.c_str(), nullptr);
      _exit(127);
    }
    const std::regex re("listening on port ([0-9]+)");
    for (int i = 0; i < 1000 && port == 0; ++i) {
      std::ifstream f(log);
      std::string text((std::istreambuf_iterator<char>(f)), {});
      std::smatch m;
      if (std::regex_search(text, m, re)) port = std::stoi(m[1]);
      if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::remove(log.c_str());
    if (port == 0) Die("worker " + name + " did not start (" + binary + ")");
  }
  ~WorkerProc() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

// Forwards every connection to `target_port` and counts the bytes both ways.
class CountingRelay {
 public:
  explicit CountingRelay(int target_port) : target_(target_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = Loopback(0);
    socklen_t len = sizeof(a);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        listen(listen_fd_, 16) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      Die("relay cannot listen");
    }
    port_ = ntohs(a.sin_port);
    std::thread([this] { AcceptLoop(); }).detach();
  }
  int port() const { return port_; }
  int64_t bytes() const { return bytes_; }
  void Reset() { bytes_ = 0; }

 private:
  static sockaddr_in Loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  void AcceptLoop() {
    while (true) {
      const int in = accept(listen_fd_, nullptr, nullptr);
      if (in < 0) return;
      const int out = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a = Loopback(target_);
      if (connect(out, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        close(in);
        close(out);
        continue;
      }
      const int one = 1;
      setsockopt(in, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      setsockopt(out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::thread([this, in, out] { Pump(in, out); }).detach();
      std::thread([this, in, out] { Pump(out, in); }).detach();
    }
  }
  void Pump(int from, int to) {
    std::vector<char> buf(1 << 16);
    while (true) {
      const ssize_t n = read(from, buf.data(), buf.size());
      if (n <= 0) break;
      bytes_ += n;
      for (ssize_t off = 0; off < n;) {
        const ssize_t w = write(to, buf.data() + off, n - off);
        if (w <= 0) return;
        off += w;
      }
    }
    shutdown(to, SHUT_WR);
  }
  int target_ = 0, port_ = 0, listen_fd_ = -1;
  std::atomic<int64_t> bytes_{0};
};

// x[1, n] -> Relu a -> Relu b; a on device 0, b on `b_device`.
Plan TwoLayerPlan(Graph* g, int64_t n, int b_device) {
  *g = Graph();
  g->name = "relu2";
  if (!g->AddInput("x", {1, n}).ok() ||
      !g->AddNode(Node{"a", "Relu", {"x"}, {"ya"}, {}}).ok() ||
      !g->AddNode(Node{"b", "Relu", {"ya"}, {"yb"}, {}}).ok()) {
    Die("cannot build the test graph");
  }
  g->outputs = {"yb"};
  if (!InferShapes(g).ok()) Die("cannot shape the test graph");
  BuildRequest r;
  r.graph = g;
  r.model.spec = "relu2";
  r.devices = {PlanDevice{"dev0", 1, 0}, PlanDevice{"dev1", 1, 0}};
  r.strategy = "pipeline";
  r.placement["a"] = {0};
  r.placement["b"] = {b_device};
  r.output_device = b_device;
  auto p = BuildPlan(r);
  if (!p.ok()) Die(p.status().message());
  return *p;
}

std::unique_ptr<Coordinator> Deployed(const Plan& p, const Cluster& c) {
  auto coord = Coordinator::Create(p, c, {});
  if (!coord.ok()) Die(coord.status().message());
  Status s = (*coord)->Deploy({}, nullptr);
  if (!s.ok()) Die(s.message());
  return std::move(coord).value();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) {
  using namespace shoal;
  if (argc < 2) Die("usage: shoal_transport_bench SHOAL_BINARY [REQUESTS]");
  const int requests = argc > 2 ? std::atoi(argv[2]) : 2000;
  WorkerProc w0(argv[1], "dev0"), w1(argv[1], "dev1");

  // Bytes on the wire: dev1 reached only through the relay.
  CountingRelay relay(w1.port);
  Cluster relayed;
  relayed.devices = {
      DeviceSpec{"dev0", w0.address()},
      DeviceSpec{"dev1", "127.0.0.1:" + std::to_string(relay.port())}};
  std::cout << "| tensor payload | bytes on the wire (dev0 -> dev1 and its "
               "reply) | overhead |\n|---:|---:|---:|\n";
  for (int64_t elems : {16, 256, 4096, 65536, 262144, 1048576, 4194304}) {
    Graph g;
    Plan p = TwoLayerPlan(&g, elems, 1);
    auto c = Deployed(p, relayed);
    Tensor x({1, elems});
    Tensor y;
    if (!c->Run(x, &y, nullptr, 0).ok()) Die("warm-up failed");
    const int n = elems >= 1048576 ? 20 : 200;
    relay.Reset();
    for (int i = 0; i < n; ++i) {
      Status s = c->Run(x, &y, nullptr, i + 1);
      if (!s.ok()) Die(s.message());
    }
    // The output goes from dev1 to the coordinator directly; what crossed
    // the relay is dev0's tensor to dev1 and dev1's acknowledgement.
    const double per = relay.bytes() / double(n);
    const double payload = elems * 4.0;
    std::printf("| %lld B | %.0f B | %+.2f%% (%+.0f B) |\n",
                static_cast<long long>(payload), per,
                100.0 * (per - payload) / payload, per - payload);
  }

  // One hop: the same two layers on one device, and on two.
  Cluster direct;
  direct.devices = {DeviceSpec{"dev0", w0.address()},
                    DeviceSpec{"dev1", w1.address()}};
  Graph g1, g2;
  Plan one = TwoLayerPlan(&g1, 16, 0), two = TwoLayerPlan(&g2, 16, 1);
  auto c1 = Deployed(one, direct);
  auto c2 = Deployed(two, direct);
  Tensor x({1, 16}), y;
  std::vector<double> l1, l2;
  for (int round = 0; round < 20; ++round) {  // interleaved against drift
    for (auto [c, l] : {std::pair{c1.get(), &l1}, std::pair{c2.get(), &l2}}) {
      // A worker holds one plan at a time: deploy again (no weights).
      if (Status s = c->Deploy({}, nullptr); !s.ok()) Die(s.message());
      for (int i = 0; i < requests / 20; ++i) {
        RunStats st;
        Status s = c->Run(x, &y, &st, i);
        if (!s.ok()) Die(s.message());
        if (round > 0) l->push_back(st.latency_ms);  // round 0: warm-up
      }
    }
  }
  const double m1 = Median(l1), m2 = Median(l2);
  std::printf(
      "\n64 B tensor, %zu requests each: two layers on one worker %.3f ms "
      "(coordinator -> dev0 -> coordinator), on two workers %.3f ms (one "
      "more hop, dev0 -> dev1): **one hop adds %.3f ms**\n",
      l1.size(), m1, m2, m2 - m1);
  return 0;
}
