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
