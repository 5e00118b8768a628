// A PutBlobs stream written into a worker's blob cache: each blob goes to a
// file of the cache as its chunks arrive, so a worker holds one chunk in
// memory however large the weights.
#ifndef SHOAL_RUNTIME_BLOB_UPLOAD_H_
#define SHOAL_RUNTIME_BLOB_UPLOAD_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/blob_cache.h"
#include "shoal.pb.h"

namespace shoal {

// `next` gives the stream's chunks until it returns false. A blob larger
// than `max_blob_bytes` (the worker's memory budget) is refused; `who`
// names the worker in errors. Counts what was stored in `rep`.
grpc::Status ReceiveBlobStream(BlobCache* cache, int64_t max_blob_bytes,
                               const std::string& who,
                               const std::function<bool(rpc::BlobChunk*)>& next,
                               rpc::PutBlobsReply* rep);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_BLOB_UPLOAD_H_
