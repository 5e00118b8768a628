// The release of shoal this build is, as `--version` prints it and workers
// announce it on the network (src/discovery/worker_txt.h).
#ifndef SHOAL_UTIL_VERSION_H_
#define SHOAL_UTIL_VERSION_H_

namespace shoal {

inline constexpr const char* kShoalVersion = "0.1.0";

}  // namespace shoal

#endif  // SHOAL_UTIL_VERSION_H_
