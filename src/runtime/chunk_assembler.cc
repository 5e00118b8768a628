#include "runtime/chunk_assembler.h"

namespace shoal {

StatusOr<std::optional<rpc::TensorMessage>> ChunkAssembler::Add(
    const rpc::TensorMessage& m, WireSize size, int64_t chunk_bytes,
    Clock::time_point expiry) {
  const std::string what = "chunk at byte " + std::to_string(m.chunk_offset()) +
                           " of transfer " + std::to_string(m.transfer()) +
                           " of request " + m.request();
  const bool fits = size.exact
                        ? m.total_bytes() == size.bytes
                        : m.total_bytes() > 0 && m.total_bytes() < size.bytes;
  if (chunk_bytes <= 0 || !fits) {
    return InvalidArgument(
        what + ": the transfer holds " + (size.exact ? "" : "less than ") +
        std::to_string(size.bytes) + " bytes, the chunk says " +
        std::to_string(m.total_bytes()));
  }
  const int64_t expected_bytes = m.total_bytes();
  const int64_t offset = m.chunk_offset();
  const int64_t got = static_cast<int64_t>(m.data().size());
  if (offset < 0 || offset >= expected_bytes || offset % chunk_bytes != 0 ||
      got != std::min(chunk_bytes, expected_bytes - offset)) {
    return InvalidArgument(what + ": " + std::to_string(got) +
                           " bytes do not fit chunks of " +
                           std::to_string(chunk_bytes));
  }
  const int64_t chunks = (expected_bytes + chunk_bytes - 1) / chunk_bytes;
  const int64_t index = offset / chunk_bytes;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Clock::now();
  DropExpiredLocked(now);
  const auto key = std::make_pair(m.request(), m.transfer());
  auto [it, fresh] = partial_.try_emplace(key);
  Partial& p = it->second;
  if (fresh) {
    p.whole = m;
    p.whole.clear_data();
    p.whole.clear_chunk_offset();
    p.whole.clear_total_bytes();
    p.whole.mutable_data()->resize(expected_bytes);
    p.have.assign(chunks, false);
    p.missing = chunks;
    p.expiry = expiry;
    held_ += expected_bytes;
  }
  if (static_cast<int64_t>(p.whole.data().size()) != expected_bytes ||
      p.whole.compression() != m.compression() ||
      p.whole.raw_bytes() != m.raw_bytes()) {
    return InvalidArgument(what + " does not match the transfer's first chunk");
  }
  if (p.have[index]) return InvalidArgument(what + " came twice");
  p.have[index] = true;
  p.whole.mutable_data()->replace(offset, got, m.data());
  if (--p.missing > 0) return std::optional<rpc::TensorMessage>();
  std::optional<rpc::TensorMessage> out(std::move(p.whole));
  held_ -= expected_bytes;
  partial_.erase(it);
  return out;
}

void ChunkAssembler::Drop(const std::string& request) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = partial_.lower_bound({request, INT32_MIN});
       it != partial_.end() && it->first.first == request;) {
    held_ -= static_cast<int64_t>(it->second.whole.data().size());
    it = partial_.erase(it);
  }
}

int64_t ChunkAssembler::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

void ChunkAssembler::DropExpiredLocked(Clock::time_point now) {
  for (auto it = partial_.begin(); it != partial_.end();) {
    if (it->second.expiry < now) {
      held_ -= static_cast<int64_t>(it->second.whole.data().size());
      it = partial_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace shoal
