// IDX files (LeCun's MNIST format, also Fashion-MNIST's), gzipped or plain:
// a big-endian magic (0, 0, type 0x08 = unsigned byte, number of dims), the
// dims as big-endian int32, then the bytes.
#ifndef SHOAL_TRAIN_IDX_FILE_H_
#define SHOAL_TRAIN_IDX_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // row-major, NumElements(dims) bytes
};

// Reads `path` (zlib reads plain files too). Errors name the file: missing,
// not gzip-decodable, a magic that is not unsigned-byte IDX, a dim count
// other than `expected_rank`, or fewer bytes than the dims promise.
StatusOr<IdxArray> ReadIdxFile(const std::string& path, int expected_rank);

}  // namespace shoal

#endif  // SHOAL_TRAIN_IDX_FILE_H_
