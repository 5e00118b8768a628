#include "runtime/process_setup.h"

#include <absl/synchronization/mutex.h>
#include <grpc/support/log.h>
#include <malloc.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace shoal {

void SkipMutexDeadlockChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

void MapLargeAllocations() {
#ifdef __GLIBC__
  // Setting it also turns glibc's raising of it off.
  mallopt(M_MMAP_THRESHOLD, kMapLargeAllocationBytes);
#endif
}

namespace {

std::atomic<int64_t> g_failed_handshakes{0};

// One line as gRPC's own log function writes it: severity, date and time,
// the file's base name and line, the message.
void WriteGrpcLine(const gpr_log_func_args* a) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm local;
  localtime_r(&tv.tv_sec, &local);
  char when[32];
  strftime(when, sizeof when, "%m%d %H:%M:%S", &local);
  const char* base = std::strrchr(a->file, '/');
  std::fprintf(stderr, "%s%s.%06ld %s:%d] %s\n",
               gpr_log_severity_string(a->severity), when,
               static_cast<long>(tv.tv_usec), base ? base + 1 : a->file,
               a->line, a->message);
}

void QuietLog(gpr_log_func_args* a) {
  if (a->severity != GPR_LOG_SEVERITY_ERROR ||
      std::strstr(a->message, "Handshake failed") == nullptr) {
    WriteGrpcLine(a);
    return;
  }
  ++g_failed_handshakes;
  static std::mutex mu;
  static std::chrono::steady_clock::time_point last;
  static int64_t left_out = 0;
  static bool logged = false;
  std::lock_guard<std::mutex> lock(mu);
  const auto now = std::chrono::steady_clock::now();
  if (logged && now - last < std::chrono::seconds(kHandshakeLogPeriodS)) {
    ++left_out;
    return;
  }
  if (left_out > 0) {
    std::fprintf(stderr,
                 "shoal: %lld more failed TLS handshakes were not logged "
                 "(shoal_worker_tls_handshake_failures_total counts them)\n",
                 static_cast<long long>(left_out));
  }
  WriteGrpcLine(a);
  std::fprintf(stderr,
               "shoal: further failed TLS handshakes in the next %d s are "
               "counted, not logged\n",
               kHandshakeLogPeriodS);
  last = now;
  left_out = 0;
  logged = true;
}

}  // namespace

void QuietRepeatedGrpcLogs() { gpr_set_log_function(QuietLog); }

int64_t FailedTlsHandshakes() { return g_failed_handshakes.load(); }

}  // namespace shoal
