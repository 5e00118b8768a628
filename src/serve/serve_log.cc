#include "serve/serve_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace shoal {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kText};

// The sink and the lock that keeps lines whole when threads log at once.
std::mutex& SinkMutex() {
  static std::mutex mu;
  return mu;
}
std::function<void(const std::string&)>& Sink() {
  static std::function<void(const std::string&)> sink;
  return sink;
}

__attribute__((format(printf, 3, 0))) void Emit(LogLevel level,
                                                const nlohmann::json& fields,
                                                const char* fmt, va_list ap) {
  // Messages are a line or two; one longer is cut, not dropped.
  char msg[4096];
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  const std::string line = FormatLogLine(
      g_format.load(), std::chrono::system_clock::now(), level, msg, fields);
  std::lock_guard<std::mutex> lock(SinkMutex());
  if (Sink()) {
    Sink()(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "INFO";
}

StatusOr<LogFormat> ParseLogFormat(const std::string& name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return InvalidArgument("'" + name + "' is not a log format (text or json)");
}

std::string IsoUtcMillis(std::chrono::system_clock::time_point t) {
  const auto ms_since_epoch =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          t.time_since_epoch())
          .count();
  // Floor division: a time before 1970 still gets 0..999 milliseconds.
  int64_t secs = ms_since_epoch / 1000;
  int ms = static_cast<int>(ms_since_epoch % 1000);
  if (ms < 0) {
    ms += 1000;
    --secs;
  }
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm;
  gmtime_r(&tt, &tm);
  char stamp[40];
  const size_t n =
      std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03dZ", ms);
  return stamp;
}

std::string FormatLogLine(LogFormat format,
                          std::chrono::system_clock::time_point t,
                          LogLevel level, const std::string& msg,
                          const nlohmann::json& fields) {
  if (format == LogFormat::kText) {
    return IsoUtcMillis(t) + " " + LogLevelName(level) + " serve: " + msg;
  }
  // ordered_json keeps ts, level and msg first, as a person reading the
  // line expects; the fields follow, by name.
  nlohmann::ordered_json j;
  j["ts"] = IsoUtcMillis(t);
  j["level"] = LogLevelName(level);
  j["msg"] = msg;
  if (fields.is_object()) {
    for (const auto& [k, v] : fields.items()) {
      // The three above are the line's own: a field does not replace them.
      if (k == "ts" || k == "level" || k == "msg") continue;
      j[k] = v;
    }
  }
  // An error message may carry bytes that are not UTF-8 (a file name, a
  // peer's text): replaced, so that the line stays valid JSON.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void SetServeLogFormat(LogFormat format) { g_format = format; }

void SetServeLogSink(std::function<void(const std::string& line)> sink) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  Sink() = std::move(sink);
}

void ServeLog(LogLevel level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Emit(level, nlohmann::json(), fmt, ap);
  va_end(ap);
}

void ServeLogWith(LogLevel level, const nlohmann::json& fields, const char* fmt,
                  ...) {
  va_list ap;
  va_start(ap, fmt);
  Emit(level, fields, fmt, ap);
  va_end(ap);
}

}  // namespace shoal
