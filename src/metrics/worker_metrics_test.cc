// The worker's series in the Prometheus text format: names, labels, values,
// and the plan info gauge following deploy and release.
#include "metrics/worker_metrics.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(WorkerMetrics, ExpositionText) {
  WorkerMetrics m;
  m.BytesSent("dev1")->Increment(1234);
  m.BytesSent("coordinator")->Increment(40);
  m.BytesReceived("dev0")->Increment(999);
  auto* conv = m.TaskSeconds("Conv");
  conv->Observe(0.003);
  conv->Observe(0.2);
  m.busy_seconds().Increment(0.203);
  m.Error(WorkerError::kSendFailed);
  m.Deployed("plan-a", 3);
  WorkerGauges g;
  g.ready_tasks = 2;
  g.requests_in_flight = 5;
  g.send_queue = 1;
  g.memory_budget_bytes = 1 << 30;
  g.weight_bytes = 1000;
  g.activation_bytes = 200;
  g.mailbox_bytes = 30;
  const std::string t = "\n" + m.Scrape(g);

  EXPECT_TRUE(Has(t, "# TYPE shoal_worker_bytes_sent_total counter")) << t;
  EXPECT_TRUE(Has(t, "shoal_worker_bytes_sent_total{peer=\"dev1\"} 1234")) << t;
  EXPECT_TRUE(Has(t, "shoal_worker_bytes_sent_total{peer=\"coordinator\"} 40"));
  EXPECT_TRUE(Has(t, "shoal_worker_bytes_received_total{peer=\"dev0\"} 999"));
  EXPECT_TRUE(Has(t, "# TYPE shoal_worker_task_seconds histogram"));
  EXPECT_TRUE(Has(
      t, "shoal_worker_task_seconds_bucket{kind=\"Conv\",le=\"0.0025\"} 0"));
  EXPECT_TRUE(
      Has(t, "shoal_worker_task_seconds_bucket{kind=\"Conv\",le=\"0.005\"} 1"));
  EXPECT_TRUE(
      Has(t, "shoal_worker_task_seconds_bucket{kind=\"Conv\",le=\"+Inf\"} 2"));
  EXPECT_TRUE(Has(t, "shoal_worker_task_seconds_count{kind=\"Conv\"} 2"));
  EXPECT_TRUE(Has(t, "shoal_worker_task_seconds_sum{kind=\"Conv\"} 0.203"));
  EXPECT_TRUE(Has(t, "shoal_worker_busy_seconds_total 0.203"));
  EXPECT_TRUE(Has(t, "shoal_worker_errors_total{kind=\"send_failed\"} 1"));
  // Every kind is there from the start, at 0: a rate over it is defined.
  EXPECT_TRUE(Has(t, "shoal_worker_errors_total{kind=\"request_expired\"} 0"));
  EXPECT_TRUE(Has(t, "shoal_worker_errors_total{kind=\"unauthorized\"} 0"));
  EXPECT_TRUE(Has(t, "shoal_worker_deployments_total 1"));
  EXPECT_TRUE(Has(t, "shoal_worker_plan_info{plan_id=\"plan-a\"} 3"));
  EXPECT_TRUE(Has(t, "shoal_worker_ready_tasks 2"));
  EXPECT_TRUE(Has(t, "shoal_worker_requests_in_flight 5"));
  EXPECT_TRUE(Has(t, "shoal_worker_send_queue_messages 1"));
  EXPECT_TRUE(Has(t, "shoal_worker_memory_budget_bytes 1073741824"));
  EXPECT_TRUE(
      Has(t, "shoal_worker_memory_in_use_bytes{part=\"weights\"} 1000"));
  EXPECT_TRUE(
      Has(t, "shoal_worker_memory_in_use_bytes{part=\"activations\"} 200"));
  EXPECT_TRUE(
      Has(t, "shoal_worker_memory_in_use_bytes{part=\"mailboxes\"} 30"));
}

TEST(WorkerMetrics, PlanInfoFollowsTheDeployment) {
  WorkerMetrics m;
  m.Deployed("p1", 2);
  m.Deployed("p2", 4);
  std::string t = m.Scrape({});
  EXPECT_EQ(t.find("plan_id=\"p1\""), std::string::npos) << t;
  EXPECT_NE(t.find("shoal_worker_plan_info{plan_id=\"p2\"} 4"),
            std::string::npos);
  EXPECT_NE(t.find("shoal_worker_deployments_total 2"), std::string::npos);
  m.PlanNow("", 0);  // released: no plan
  t = m.Scrape({});
  EXPECT_EQ(t.find("shoal_worker_plan_info{"), std::string::npos) << t;
}

TEST(WorkerMetrics, HandlesAreSharedBetweenDeployments) {
  WorkerMetrics m;
  // Two deployments naming the same peer add to one series.
  m.BytesSent("dev1")->Increment(10);
  m.BytesSent("dev1")->Increment(5);
  EXPECT_EQ(m.BytesSent("dev1")->Value(), 15);
  EXPECT_EQ(m.TaskSeconds("Gemm"), m.TaskSeconds("Gemm"));
}

}  // namespace
}  // namespace shoal
