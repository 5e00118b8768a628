// The log of `shoal serve`: one line per event on stderr, for a person
// (`2026-11-29T03:31:29.123Z INFO serve: listening on ...`) or, with
// --log-format json, for a machine (one JSON object a line: ts, level, msg
// and the event's fields, such as its request or generation). Both carry
// the UTC time to the millisecond and a level, so that journald, a file or
// a log shipper can order, filter and alert on them (docs/serve.md).
#ifndef SHOAL_SERVE_SERVE_LOG_H_
#define SHOAL_SERVE_SERVE_LOG_H_

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "util/status.h"

namespace shoal {

// INFO: what serve does as planned; WARN: something a person should look
// at though requests are answered (a device lost, a re-plan that failed,
// plain text beyond this machine); ERROR: a request that failed, or the
// monitor that could not run a step.
enum class LogLevel { kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

const char* LogLevelName(LogLevel level);

// "text" or "json" (--log-format).
StatusOr<LogFormat> ParseLogFormat(const std::string& name);

// UTC, ISO 8601 with milliseconds: 2026-11-29T03:31:29.123Z.
std::string IsoUtcMillis(std::chrono::system_clock::time_point t);

// One line without its newline. `fields` is a JSON object (or null): the
// JSON form adds its members after ts, level and msg; the text form has
// them in its message already and leaves them out.
std::string FormatLogLine(LogFormat format,
                          std::chrono::system_clock::time_point t,
                          LogLevel level, const std::string& msg,
                          const nlohmann::json& fields);

// The process's serve log: its form (text until set) and where its lines go
// (stderr until set; a test takes them to check them). A null sink is
// stderr again.
void SetServeLogFormat(LogFormat format);
void SetServeLogSink(std::function<void(const std::string& line)> sink);

// A line of the serve log, printf-style.
void ServeLog(LogLevel level, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
// The same with fields for the JSON form (a JSON object).
void ServeLogWith(LogLevel level, const nlohmann::json& fields, const char* fmt,
                  ...) __attribute__((format(printf, 3, 4)));

}  // namespace shoal

#endif  // SHOAL_SERVE_SERVE_LOG_H_
