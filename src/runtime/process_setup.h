// Process-wide settings of the libraries under the runtime, made once at the
// top of main().
#ifndef SHOAL_RUNTIME_PROCESS_SETUP_H_
#define SHOAL_RUNTIME_PROCESS_SETUP_H_

namespace shoal {

// gRPC locks Abseil mutexes on every call. Debian's Abseil checks each lock
// for a deadlock cycle (a graph update per acquisition), a debugging aid
// that took about 3 % of a worker's CPU in a halo-exchanging plan: a device
// whose CPU is its budget pays it in latency. shoal's own locks are
// std::mutex and are unaffected; ThreadSanitizer builds still see every
// lock.
void SkipMutexDeadlockChecks();

}  // namespace shoal

#endif  // SHOAL_RUNTIME_PROCESS_SETUP_H_
