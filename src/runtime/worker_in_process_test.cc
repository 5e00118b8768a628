// The worker's handlers called in-process (Worker::StartInProcess), as the
// fuzz target calls them: no server, every outgoing call over one channel.
#include <gtest/gtest.h>

#include "runtime/wire.h"
#include "runtime/worker.h"

namespace shoal {
namespace {

rpc::BlobChunk Blob(char fill, int64_t bytes) {
  rpc::BlobChunk c;
  c.set_protocol(kProtocolVersion);
  c.set_data(std::string(bytes, fill));
  c.set_hash(HashString(c.data()));
  c.set_total_bytes(bytes);
  return c;
}

std::vector<std::string> Missing(Worker& w,
                                 const std::vector<rpc::BlobChunk>& blobs) {
  grpc::ServerContext ctx;
  rpc::HaveBlobsRequest q;
  q.set_protocol(kProtocolVersion);
  for (const auto& b : blobs) q.add_hashes(b.hash());
  rpc::HaveBlobsReply r;
  EXPECT_TRUE(w.service()->HaveBlobs(&ctx, &q, &r).ok());
  return {r.missing().begin(), r.missing().end()};
}

TEST(WorkerInProcess, HandlersAnswerWithoutAServer) {
  WorkerOptions o;
  o.name = "inproc";
  auto w = Worker::StartInProcess(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  grpc::ServerContext ctx;
  rpc::HealthRequest q;
  q.set_protocol(kProtocolVersion);
  rpc::HealthReply r;
  ASSERT_TRUE((*w)->service()->Health(&ctx, &q, &r).ok());
  EXPECT_EQ(r.name(), "inproc");
  EXPECT_EQ(r.deployment(), "");
  // A Send without a deployment is refused, naming the worker.
  grpc::ServerContext ctx2;
  rpc::TensorMessage m;
  m.set_protocol(kProtocolVersion);
  rpc::Ack ack;
  grpc::Status s = (*w)->service()->Send(&ctx2, &m, &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("inproc"), std::string::npos);
}

// Uploads alone (no deployment after them) keep the cache within its size:
// the oldest blobs go first.
TEST(WorkerInProcess, UploadsAreTrimmedToTheCacheSize) {
  WorkerOptions o;
  o.cache_max_bytes = 2500;
  auto w = Worker::StartInProcess(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const std::vector<rpc::BlobChunk> blobs = {Blob('a', 1000), Blob('b', 1000),
                                             Blob('c', 1000)};
  for (const auto& b : blobs) {
    rpc::PutBlobsReply r;
    ASSERT_TRUE((*w)->PutBlobs({b}, &r).ok());
    EXPECT_EQ(r.blobs(), 1);
  }
  EXPECT_EQ(Missing(**w, blobs), std::vector<std::string>{blobs[0].hash()});
}

TEST(WorkerInProcess, IncompleteBlobIsRefused) {
  auto w = Worker::StartInProcess(WorkerOptions{});
  ASSERT_TRUE(w.ok()) << w.status().message();
  rpc::BlobChunk c = Blob('x', 100);
  c.set_total_bytes(200);
  rpc::PutBlobsReply r;
  grpc::Status s = (*w)->PutBlobs({c}, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("incomplete"), std::string::npos);
  EXPECT_EQ(Missing(**w, {c}).size(), 1u);
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

// A link probe's times are board time: a worker dilated x3 (its link 3x
// slower in host time, as `worker --dilation 3` makes it) reports what the
// undilated link takes, as the coordinator reports requests.
TEST(WorkerProbe, ReportsBoardTimeWhenDilated) {
  WorkerOptions sink_opts;
  sink_opts.name = "sink";
  sink_opts.listen = "127.0.0.1:0";
  auto sink = Worker::Start(sink_opts);
  ASSERT_TRUE(sink.ok()) << sink.status().message();

  constexpr double kBandwidth = 8e6, kLatency = 0.02, kDilation = 3;
  constexpr int64_t kBytes = 100000;  // 0.1 s at 8 Mbit/s
  WorkerOptions o;
  o.name = "prober";
  o.listen = "127.0.0.1:0";
  o.dilation = kDilation;
  o.link.bandwidth_bps = kBandwidth / kDilation;
  o.link.latency_s = kLatency * kDilation;
  auto prober = Worker::Start(o);
  ASSERT_TRUE(prober.ok()) << prober.status().message();

  auto stub = rpc::Worker::NewStub(
      MakeChannel("127.0.0.1:" + std::to_string((*prober)->port()), 1 << 20));
  rpc::LinkProbeRequest req;
  req.set_protocol(kProtocolVersion);
  req.set_target("127.0.0.1:" + std::to_string((*sink)->port()));
  req.set_bytes(kBytes);
  req.set_count(2);
  req.set_timeout_ms(10000);
  rpc::LinkProbeReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(20000));
  const grpc::Status s = stub->ProbeLink(&ctx, req, &rep);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(rep.seconds_size(), 2);
  const double board_s = kBytes * 8 / kBandwidth + kLatency;  // 0.12 s
  for (double t : rep.seconds()) {
    // Loose: the host's own time for a message comes on top, but a probe
    // reported in host time would be 3x, 0.36 s.
    EXPECT_GT(t, 0.8 * board_s);
    EXPECT_LT(t, 2 * board_s);
  }
}

}  // namespace
}  // namespace shoal
