// Puts transfers sent in chunks (plan/broadcast.h) back together on the
// receiving worker. A chunk is checked against what the plan says the
// transfer holds before anything is allocated, so a peer cannot make the
// worker hold more than the plan's own bytes for a request.
#ifndef SHOAL_RUNTIME_CHUNK_ASSEMBLER_H_
#define SHOAL_RUNTIME_CHUNK_ASSEMBLER_H_

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor_codec.h"
#include "shoal.pb.h"
#include "util/status.h"

namespace shoal {

class ChunkAssembler {
 public:
  using Clock = std::chrono::steady_clock;

  // Adds chunk `m` of transfer m.transfer() of request m.request(), whose
  // whole is `size.bytes` (exactly, or at most when it is compressed) in
  // chunks of `chunk_bytes`. Returns the whole message (m's header, every
  // chunk's data) with the last chunk, nullopt before; an error for a
  // chunk that does not fit (size, offset, total) or came twice. What is
  // not complete by `expiry` is dropped.
  StatusOr<std::optional<rpc::TensorMessage>> Add(const rpc::TensorMessage& m,
                                                  WireSize size,
                                                  int64_t chunk_bytes,
                                                  Clock::time_point expiry);
  // Drops what request `request` left incomplete (it failed).
  void Drop(const std::string& request);
  // Bytes held for incomplete transfers.
  int64_t held_bytes() const;

 private:
  struct Partial {
    rpc::TensorMessage whole;  // header, and data as it fills
    std::vector<bool> have;    // per chunk
    int64_t missing = 0;       // chunks
    Clock::time_point expiry;
  };
  void DropExpiredLocked(Clock::time_point now);

  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, Partial> partial_;
  int64_t held_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_CHUNK_ASSEMBLER_H_
