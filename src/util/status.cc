#include "util/status.h"

namespace shoal {

namespace {
const char* CodeName(Code c) {
  switch (c) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kUnsupported:
      return "unsupported";
    case Code::kNotFound:
      return "not found";
    case Code::kFailedPrecondition:
      return "failed precondition";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kDeadlineExceeded:
      return "deadline exceeded";
    case Code::kResourceExhausted:
      return "resource exhausted";
    case Code::kInternal:
      return "internal error";
  }
  return "unknown";
}
}  // namespace

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace shoal
