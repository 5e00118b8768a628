// The connection watch on in-process workers: a worker that shuts down is
// reported as a dropped connection, an address nobody listens on as one
// that cannot be reached, and a worker that stays up is never reported.
#include "runtime/connection_watch.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "runtime/wire.h"
#include "runtime/worker.h"
#include "util/net_address.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

// What the watch reported, per channel index.
struct Reports {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<std::string>> by_index;
  explicit Reports(int n) : by_index(n) {}
  ConnectionWatch::OnLost Callback() {
    return [this](int i, const std::string& what) {
      std::lock_guard<std::mutex> lock(mu);
      by_index[i].push_back(what);
      cv.notify_all();
    };
  }
  // Waits up to `s` seconds for a report on channel i; its text or "".
  std::string WaitFor(int i, double s) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_until(lock, Clock::now() + std::chrono::milliseconds(int(s * 1e3)),
                  [&] { return !by_index[i].empty(); });
    return by_index[i].empty() ? "" : by_index[i].front();
  }
  size_t Count(int i) {
    std::lock_guard<std::mutex> lock(mu);
    return by_index[i].size();
  }
};

std::unique_ptr<Worker> StartWorker(const std::string& name) {
  WorkerOptions o;
  o.name = name;
  auto w = Worker::Start(o);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? std::move(w).value() : nullptr;
}

TEST(ConnectionWatch, WorkerShutDownIsADroppedConnection) {
  auto stays = StartWorker("stays");
  auto goes = StartWorker("goes");
  ASSERT_TRUE(stays && goes);
  std::vector<std::shared_ptr<grpc::Channel>> ch;
  for (const auto* w : {stays.get(), goes.get()}) {
    ch.push_back(
        MakeChannel("127.0.0.1:" + std::to_string(w->port()), 1 << 20));
  }
  Reports r(2);
  ConnectionWatch watch(ch, r.Callback());
  // The watch connects idle channels itself.
  for (auto& c : ch) {
    EXPECT_TRUE(c->WaitForConnected(std::chrono::system_clock::now() +
                                    std::chrono::seconds(5)));
  }
  // The watch learns that a channel is up on its own thread: a connection
  // that drops before it has seen READY reads as one that never came up.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = Clock::now();
  goes->Shutdown();
  const std::string what = r.WaitFor(1, 5);
  EXPECT_NE(what.find("connection dropped"), std::string::npos) << what;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5);
  // The live one, pinged every second, is never reported: without the
  // servers' permission a third ping would end it (gRPC's ping strikes).
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  EXPECT_EQ(r.Count(0), 0u);
}

TEST(ConnectionWatch, NobodyListeningCannotBeReached) {
  auto port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok());
  Reports r(1);
  ConnectionWatch watch(
      {MakeChannel("127.0.0.1:" + std::to_string(*port), 1 << 20)},
      r.Callback());
  const std::string what = r.WaitFor(0, 5);
  EXPECT_NE(what.find("cannot be reached"), std::string::npos) << what;
}

}  // namespace
}  // namespace shoal
