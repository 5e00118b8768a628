// Process-wide settings of the libraries under the runtime, made once at the
// top of main().
#ifndef SHOAL_RUNTIME_PROCESS_SETUP_H_
#define SHOAL_RUNTIME_PROCESS_SETUP_H_

#include <cstdint>

namespace shoal {

// gRPC locks Abseil mutexes on every call. Debian's Abseil checks each lock
// for a deadlock cycle (a graph update per acquisition), a debugging aid
// that took about 3 % of a worker's CPU in a halo-exchanging plan: a device
// whose CPU is its budget pays it in latency. shoal's own locks are
// std::mutex and are unaffected; ThreadSanitizer builds still see every
// lock.
void SkipMutexDeadlockChecks();

// gRPC writes a line for every failed TLS handshake: a stranger or a port
// scanner connecting in a loop fills the log. From this call on, gRPC's
// lines go through a log function that writes them as gRPC does, but the
// failed handshakes at most once every kHandshakeLogPeriodS seconds, with
// how many it left out, and counts every one (FailedTlsHandshakes;
// shoal_worker_tls_handshake_failures_total).
void QuietRepeatedGrpcLogs();
constexpr int kHandshakeLogPeriodS = 10;

// Failed TLS handshakes gRPC has logged in this process since
// QuietRepeatedGrpcLogs (0 before).
int64_t FailedTlsHandshakes();

}  // namespace shoal

#endif  // SHOAL_RUNTIME_PROCESS_SETUP_H_
