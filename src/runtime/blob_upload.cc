#include "runtime/blob_upload.h"

#include <memory>

#include "runtime/wire.h"
#include "util/units.h"

namespace shoal {

grpc::Status ReceiveBlobStream(BlobCache* cache, int64_t max_blob_bytes,
                               const std::string& who,
                               const std::function<bool(rpc::BlobChunk*)>& next,
                               rpc::PutBlobsReply* rep) {
  rpc::BlobChunk c;
  std::string hash;
  std::unique_ptr<BlobCache::Writer> writer;
  int64_t total = -1, got = 0;
  auto finish = [&]() -> grpc::Status {
    if (Status s = writer->Commit(); !s.ok()) return ToGrpc(s);
    writer.reset();
    rep->set_blobs(rep->blobs() + 1);
    rep->set_bytes(rep->bytes() + total);
    hash.clear();
    total = -1;
    return grpc::Status::OK;
  };
  // The first chunk of a blob names it and its size.
  auto begin = [&]() -> grpc::Status {
    if (c.total_bytes() > max_blob_bytes) {
      return grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          who + " refuses the deployment: one weight blob takes " +
              MiB(c.total_bytes()) + " but its memory budget is " +
              MiB(max_blob_bytes));
    }
    // Any size: float32 or int8 weights; reading a blob checks its size
    // against the shape and type its deployment gives it.
    if (c.hash().empty() || c.total_bytes() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          who + ": a blob of " +
                              std::to_string(c.total_bytes()) +
                              " bytes is invalid");
    }
    auto w = cache->Begin(c.hash(), c.total_bytes());
    if (!w.ok()) return ToGrpc(w.status().WithContext(who));
    writer = std::move(w).value();
    hash = c.hash();
    total = c.total_bytes();
    got = 0;
    return grpc::Status::OK;
  };
  while (next(&c)) {
    if (auto s = CheckProtocol(c.protocol(), who); !s.ok()) return s;
    if (total < 0) {
      if (auto s = begin(); !s.ok()) return s;
    } else if (!c.hash().empty() && c.hash() != hash) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "blob " + hash + " is incomplete");
    }
    if (Status s = writer->Append(c.data()); !s.ok()) return ToGrpc(s);
    got += c.data().size();
    if (got == total) {
      if (auto s = finish(); !s.ok()) return s;
    }
  }
  if (total >= 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "blob " + hash + " is incomplete");
  }
  return grpc::Status::OK;
}

}  // namespace shoal
