// A worker's --metrics endpoint in this process: served on the port it
// chose, counting a refused tensor message as such, and a taken address
// failing the worker's start with the flag named.
#include <gtest/gtest.h>
#include <httplib.h>

#include "runtime/wire.h"
#include "runtime/worker.h"

namespace shoal {
namespace {

std::string Scrape(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5);
  auto r = c.Get("/metrics");
  return r && r->status == 200 ? r->body : "";
}

TEST(WorkerMetricsEndpoint, CountsARefusedMessage) {
  WorkerOptions o;
  o.name = "dev0";
  o.memory_bytes = 1 << 20;
  o.metrics_listen = "127.0.0.1:0";
  auto w = Worker::Start(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_GT((*w)->metrics_port(), 0);
  std::string text = Scrape((*w)->metrics_port());
  EXPECT_NE(text.find("shoal_worker_memory_budget_bytes 1048576\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shoal_worker_errors_total{kind=\"message_refused\"} 0"),
            std::string::npos);

  // A tensor for a plan this worker does not hold.
  auto stub = rpc::Worker::NewStub(MakeChannel(
      "127.0.0.1:" + std::to_string((*w)->port()), kDefaultMaxMessageBytes));
  rpc::TensorMessage m;
  m.set_protocol(kProtocolVersion);
  m.set_request("r1");
  m.set_deployment("no-such-plan");
  m.set_timeout_ms(1000);
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(3000));
  rpc::Ack ack;
  EXPECT_FALSE(stub->Send(&ctx, m, &ack).ok());
  text = Scrape((*w)->metrics_port());
  EXPECT_NE(text.find("shoal_worker_errors_total{kind=\"message_refused\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shoal_worker_deployments_total 0"), std::string::npos);
}

TEST(WorkerMetricsEndpoint, ATakenAddressFailsTheStart) {
  WorkerOptions a;
  a.name = "dev0";
  a.metrics_listen = "127.0.0.1:0";
  auto first = Worker::Start(a);
  ASSERT_TRUE(first.ok()) << first.status().message();
  WorkerOptions b;
  b.name = "dev1";
  b.metrics_listen = "127.0.0.1:" + std::to_string((*first)->metrics_port());
  auto second = Worker::Start(b);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(
                "worker dev1 --metrics cannot listen on " + b.metrics_listen),
            std::string::npos)
      << second.status().message();
}

}  // namespace
}  // namespace shoal
