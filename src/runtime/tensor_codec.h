// A tensor as it travels in a TensorMessage: its values in the plan's wire
// dtype (float32, float16 or bfloat16; pixels for an image input, see
// runtime/pixel_codec.h; a signed byte a value for an int8 transfer), and,
// where the plan allows it and the values are sparse enough to gain, those
// bytes compressed by LZ4.
//
// The receiver learns the region's shape from the plan, so everything it
// allocates is bounded by the plan before it looks at the data: the
// decompressed size must be the region's size in the message's encoding.
#ifndef SHOAL_RUNTIME_TENSOR_CODEC_H_
#define SHOAL_RUNTIME_TENSOR_CODEC_H_

#include <string>
#include <vector>

#include "graph/weights.h"
#include "plan/plan.h"
#include "shoal.pb.h"
#include "util/status.h"

namespace shoal {

// Below this fraction of zero values a tensor is sent uncompressed: LZ4
// gains little on dense floats (their low bytes are noise), and the
// compressor's time on a slow device would be wasted.
constexpr double kMinZeroFractionToCompress = 0.1;

// Sets m's data, encoding, compression and raw_bytes to `t` as `wire`
// says (Plan::TransferWire). Compressed only when at least
// kMinZeroFractionToCompress of the values are zero and the result is
// smaller. int8 sends values that are not all integers in [-128, 127] as
// float32: a message is always exact.
void EncodeTensor(const Tensor& t, const WireSettings& wire,
                  rpc::TensorMessage* m);

// t's values as signed bytes, when every one is an integer in [-128, 127]
// (an int8 transfer's and an int8 weight's are); false, and `out`
// untouched, otherwise.
bool EncodeInt8Values(const Tensor& t, std::string* out);

// Bytes a value takes in m's encoding (1 for pixels and int8, 2 for float16 and
// bfloat16, 4 for float32); 0 for an unknown encoding.
int64_t EncodedValueBytes(const rpc::TensorMessage& m);

// The most bytes m's data may hold for a region of `elements` values, and
// whether it must hold exactly that many (uncompressed) or at most.
struct WireSize {
  int64_t bytes = 0;
  bool exact = true;
};
WireSize WireSizeOf(const rpc::TensorMessage& m, int64_t elements);

// m's data as a float32 tensor of `shape`, whatever its encoding and
// compression; an error naming what does not fit (size, encoding, a
// corrupt LZ4 block).
StatusOr<Tensor> TensorFromMessage(const rpc::TensorMessage& m,
                                   const std::vector<int64_t>& shape);

// Each value of `t` as the wire dtype would carry it (rounded to f16 or
// bf16 and back): what an in-process run does to the transfers that cross
// devices, so that it computes what the cluster computes.
void RoundToWireDtype(WireDtype d, Tensor* t);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_TENSOR_CODEC_H_
