// Status and StatusOr: recoverable errors are values passed up the call
// chain (leveldb style). Aborting checks are kept for programmer errors only.
#ifndef SHOAL_UTIL_STATUS_H_
#define SHOAL_UTIL_STATUS_H_

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

namespace shoal {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // bad input from the user: malformed file, bad flag
  kUnsupported,      // an op or attribute shoal does not implement
  kNotFound,
  kFailedPrecondition,  // e.g. a plan that does not fit
  kUnavailable,         // a device that cannot be reached
  kDeadlineExceeded,
  // A device over a limit because of what it holds now (a plan kept
  // alongside, requests in flight, their inputs): once those are gone, the
  // same call may succeed.
  kResourceExhausted,
  kInternal,
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Prepends context ("while importing foo.onnx: ...") to an error.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status(Code::kInvalidArgument, std::move(m));
}
inline Status Unsupported(std::string m) {
  return Status(Code::kUnsupported, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(Code::kNotFound, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(Code::kFailedPrecondition, std::move(m));
}
inline Status Unavailable(std::string m) {
  return Status(Code::kUnavailable, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(Code::kResourceExhausted, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(Code::kInternal, std::move(m));
}

template <typename T>
class StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT
    if (status_.ok()) status_ = Internal("StatusOr built from an OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    Check();
    return *value_;
  }
  const T& value() const& {
    Check();
    return *value_;
  }
  T&& value() && {
    Check();
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void Check() const {
    if (!status_.ok()) {
      std::cerr << "StatusOr::value() on error: " << status_.ToString()
                << std::endl;
      std::abort();
    }
  }
  Status status_;
  std::optional<T> value_;
};

}  // namespace shoal

#define SHOAL_CONCAT_IMPL(a, b) a##b
#define SHOAL_CONCAT(a, b) SHOAL_CONCAT_IMPL(a, b)

#define RETURN_IF_ERROR(expr)     \
  do {                            \
    ::shoal::Status _st = (expr); \
    if (!_st.ok()) return _st;    \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SHOAL_CONCAT(_status_or_, __LINE__), lhs, expr)

#endif  // SHOAL_UTIL_STATUS_H_
