#include "security/device_name.h"

#include <cstdio>

namespace shoal {

namespace {

bool Allowed(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// The name as printable ASCII: a refused name may hold control bytes or
// invalid UTF-8, which must not reach the terminal or a JSON error.
std::string Escaped(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size() && i < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  if (name.size() > 80) out += "...";
  return out;
}

}  // namespace

Status CheckDeviceName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxDeviceNameLength &&
            name[0] != '-' && name[0] != '.';
  for (char c : name) ok = ok && Allowed(c);
  if (ok) return Status::Ok();
  return InvalidArgument(
      "device name '" + Escaped(name) +
      "' is not allowed: names become file names, so they are 1 to " +
      std::to_string(kMaxDeviceNameLength) +
      " letters, digits, '-', '_' or '.', not starting with '-' or '.'");
}

}  // namespace shoal
