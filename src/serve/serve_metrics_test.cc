// shoal serve's series: outcomes, latency, in flight, re-plans, and the
// per-device gauges set from the status (and dropped with the device).
#include "serve/serve_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace shoal {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(ServeMetrics, OutcomeOfAStatus) {
  EXPECT_STREQ(RequestOutcome(Status::Ok()), "answered");
  EXPECT_STREQ(RequestOutcome(InvalidArgument("x")), "invalid_input");
  EXPECT_STREQ(RequestOutcome(Status(Code::kDeadlineExceeded, "x")),
               "deadline_exceeded");
  EXPECT_STREQ(RequestOutcome(Unavailable("x")), "unavailable");
  EXPECT_STREQ(RequestOutcome(Internal("x")), "failed");
  EXPECT_STREQ(RequestOutcome(FailedPrecondition("x")), "failed");
}

TEST(ServeMetrics, RequestsAndReplans) {
  ServeMetrics m;
  for (int i = 0; i < 3; ++i) m.RequestStarted();
  m.RequestEnded(Status::Ok(), 0.004);
  m.RequestEnded(Status::Ok(), 0.3);
  m.RequestStarted();
  m.RequestEnded(InvalidArgument("bad shape"), 0.001);
  m.Retried();
  m.Replanned("start");
  m.Replanned("imbalance");
  m.Replanned("imbalance");
  m.ReplanFailed();
  const std::string t = m.Scrape(rpc::ServeStatusReply());
  EXPECT_TRUE(Has(t, "shoal_serve_requests_total{outcome=\"answered\"} 2"))
      << t;
  EXPECT_TRUE(
      Has(t, "shoal_serve_requests_total{outcome=\"invalid_input\"} 1"));
  EXPECT_TRUE(Has(t, "shoal_serve_requests_total{outcome=\"unavailable\"} 0"));
  EXPECT_TRUE(Has(t, "shoal_serve_requests_in_flight 1"));
  EXPECT_TRUE(Has(t, "shoal_serve_requests_retried_total 1"));
  // Only answered requests are timed.
  EXPECT_TRUE(Has(t, "shoal_serve_request_duration_seconds_count 2"));
  EXPECT_TRUE(
      Has(t, "shoal_serve_request_duration_seconds_bucket{le=\"0.005\"} 1"));
  EXPECT_TRUE(Has(t, "shoal_serve_replans_total{kind=\"start\"} 1"));
  EXPECT_TRUE(Has(t, "shoal_serve_replans_total{kind=\"imbalance\"} 2"));
  EXPECT_TRUE(Has(t, "shoal_serve_replan_failures_total 1"));
  const auto b = m.LatencyBuckets();
  ASSERT_FALSE(b.empty());
  EXPECT_TRUE(std::isinf(b.back().first));
  EXPECT_EQ(b.back().second, 2u);
}

TEST(ServeMetrics, DeviceGaugesFollowTheStatus) {
  ServeMetrics m;
  rpc::ServeStatusReply s;
  s.set_generation(3);
  auto* a = s.add_devices();
  a->set_name("pi1");
  a->set_state("serving");
  a->set_share(1.5);
  a->set_predicted_ms(20);
  a->set_measured_ms(30);
  a->set_utilisation(0.75);
  a->set_queue_mean(1.25);
  auto* b = s.add_devices();
  b->set_name("pi2");
  b->set_state("down");
  std::string t = m.Scrape(s);
  EXPECT_TRUE(Has(t, "shoal_serve_generation 3")) << t;
  EXPECT_TRUE(Has(t, "shoal_serve_device_up{device=\"pi1\"} 1"));
  EXPECT_TRUE(Has(t, "shoal_serve_device_up{device=\"pi2\"} 0"));
  EXPECT_TRUE(Has(t, "shoal_serve_device_share{device=\"pi1\"} 1.5"));
  EXPECT_TRUE(
      Has(t, "shoal_serve_device_predicted_seconds{device=\"pi1\"} 0.02"));
  EXPECT_TRUE(
      Has(t, "shoal_serve_device_measured_seconds{device=\"pi1\"} 0.03"));
  EXPECT_TRUE(
      Has(t, "shoal_serve_device_utilisation_ratio{device=\"pi1\"} 0.75"));
  EXPECT_TRUE(Has(t, "shoal_serve_device_queue_mean{device=\"pi1\"} 1.25"));
  // pi2 removed from the cluster file: its series go.
  s.mutable_devices()->RemoveLast();
  t = m.Scrape(s);
  EXPECT_EQ(t.find("device=\"pi2\""), std::string::npos) << t;
  EXPECT_TRUE(Has(t, "shoal_serve_device_up{device=\"pi1\"} 1"));
}

}  // namespace
}  // namespace shoal
