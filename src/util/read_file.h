// Reading a whole file a user or a peer names (certificates, keys, cluster
// files), bounded: only a regular file, of at most `max_bytes`, is read.
// A path to /dev/zero or a FIFO would otherwise be read until memory ran
// out, and a multi-gigabyte file held whole for a parser that wants a few
// kilobytes.
#ifndef SHOAL_UTIL_READ_FILE_H_
#define SHOAL_UTIL_READ_FILE_H_

#include <cstdint>
#include <string>

#include "util/status.h"

namespace shoal {

// The bytes of `path`; errors name `what` (e.g. "TLS certificate") and the
// path: missing, not a regular file, or larger than `max_bytes`.
StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                      int64_t max_bytes,
                                      const std::string& what);

}  // namespace shoal

#endif  // SHOAL_UTIL_READ_FILE_H_
