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

// Blocks of kMapLargeAllocationBytes and more come from mmap and go back to
// the system when freed. glibc's own threshold starts at 128 KiB but rises
// to the largest block freed (up to 32 MiB), after which weights and
// activations come from its heaps, which a worker's threads split among
// arenas and which keep what is freed inside them. Profiling AlexNet on
// eight emulated Pi 3B+ left each worker at 70-136 MiB and peaked at
// 451-507 MiB; with the threshold fixed, 40 and 416 MiB on every worker.
// The heap's leftovers had added up, over AlexNet, ResNet-18 and then
// VGG16 whole, to a worker over its board's memory cgroup (1.3 GB).
void MapLargeAllocations();
constexpr int kMapLargeAllocationBytes = 1 << 20;

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
