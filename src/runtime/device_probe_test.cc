// The device probe against in-process gRPC servers whose Health answers at
// once or never (a frozen worker): the silent one is named, the answering
// one never is, and devices no request needs are not asked.
#include "runtime/device_probe.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "runtime/wire.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

// A worker's Health alone: answers, or while `frozen` holds every call
// until released or cancelled, as a stopped process would.
class FakeHealth final : public rpc::Worker::Service {
 public:
  explicit FakeHealth(bool frozen) : frozen_(frozen) {
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                       &port_);
    ConfigureServer(&b, int64_t{1} << 20);
    b.RegisterService(this);
    server_ = b.BuildAndStart();
    channel_ = MakeChannel("127.0.0.1:" + std::to_string(port_), 1 << 20);
    stub_ = rpc::Worker::NewStub(channel_);
  }
  ~FakeHealth() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      frozen_ = false;
    }
    cv_.notify_all();
    server_->Shutdown(DeadlineIn(1000));
  }
  grpc::Status Health(grpc::ServerContext* ctx, const rpc::HealthRequest*,
                      rpc::HealthReply*) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++calls_;
    while (frozen_ && !ctx->IsCancelled()) {
      cv_.wait_for(lock, std::chrono::milliseconds(10));
    }
    return grpc::Status::OK;
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  bool started() const { return server_ != nullptr && port_ > 0; }
  rpc::Worker::Stub* stub() { return stub_.get(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool frozen_;
  int calls_ = 0;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<rpc::Worker::Stub> stub_;
};

// What the probe reported, per device.
struct Reports {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<std::string>> by_device;
  explicit Reports(int n) : by_device(n) {}
  DeviceProbe::OnSilent Callback() {
    return [this](int d, const std::string& what) {
      std::lock_guard<std::mutex> lock(mu);
      by_device[d].push_back(what);
      cv.notify_all();
    };
  }
  // Waits up to `s` seconds for a report on device d; its text or "".
  std::string WaitFor(int d, double s) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_until(lock, Clock::now() + std::chrono::milliseconds(int(s * 1e3)),
                  [&] { return !by_device[d].empty(); });
    return by_device[d].empty() ? "" : by_device[d].front();
  }
  size_t Count(int d) {
    std::lock_guard<std::mutex> lock(mu);
    return by_device[d].size();
  }
};

TEST(DeviceProbe, NamesTheSilentDeviceNotTheAnsweringOne) {
  FakeHealth answers(false), frozen(true);
  ASSERT_TRUE(answers.started() && frozen.started());
  Reports r(2);
  const auto t0 = Clock::now();
  {
    DeviceProbe probe(
        {answers.stub(), frozen.stub()},
        [] {
          return std::vector<bool>{true, true};
        },
        r.Callback());
    const std::string what = r.WaitFor(1, 10);
    const double took =
        std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_NE(what.find("did not answer a Health call within 1000 ms"),
              std::string::npos)
        << what;
    // Not before its deadline: an answer that is merely slow is not silence.
    EXPECT_GE(took, 1.0);
    EXPECT_EQ(r.Count(0), 0u);
    EXPECT_GE(probe.calls(), 3);
  }
  // The answering device was asked again and again, a call at a time.
  EXPECT_GE(answers.calls(), 2);
  EXPECT_EQ(r.Count(0), 0u);
}

TEST(DeviceProbe, AsksNoDeviceThatNoRequestNeeds) {
  FakeHealth frozen(true);
  ASSERT_TRUE(frozen.started());
  Reports r(1);
  {
    DeviceProbe probe(
        {frozen.stub()}, [] { return std::vector<bool>{false}; }, r.Callback());
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(probe.calls(), 0);
  }
  EXPECT_EQ(frozen.calls(), 0);
  EXPECT_EQ(r.Count(0), 0u);
}

// A call in flight to a frozen device does not hold the destructor up
// until its deadline: it is cancelled, and not reported.
TEST(DeviceProbe, StopsWithACallInFlight) {
  FakeHealth frozen(true);
  ASSERT_TRUE(frozen.started());
  Reports r(1);
  ProbeTiming t;
  t.deadline_ms = 60000;
  const auto t0 = Clock::now();
  {
    DeviceProbe probe(
        {frozen.stub()}, [] { return std::vector<bool>{true}; }, r.Callback(),
        t);
    while (frozen.calls() == 0 &&
           Clock::now() - t0 < std::chrono::seconds(10)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(frozen.calls(), 1);
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 30);
  EXPECT_EQ(r.Count(0), 0u);
}

}  // namespace
}  // namespace shoal
