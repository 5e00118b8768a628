// Device names become file names (`cluster up`'s pidfiles, logs, weight
// caches and cgroups under its state directory) and appear in messages and
// plans, so they are limited to a set that cannot leave a directory, look
// like an option, or carry bytes a terminal or JSON would mangle.
#ifndef SHOAL_SECURITY_DEVICE_NAME_H_
#define SHOAL_SECURITY_DEVICE_NAME_H_

#include <string>

#include "util/status.h"

namespace shoal {

constexpr size_t kMaxDeviceNameLength = 64;

// OK for 1 to 64 of A-Z a-z 0-9 '-' '_' '.', not starting with '-' or
// '.'; otherwise an error quoting the name (escaped) and the rule.
Status CheckDeviceName(const std::string& name);

}  // namespace shoal

#endif  // SHOAL_SECURITY_DEVICE_NAME_H_
