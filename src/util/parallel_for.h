// Runs a function for each of n items on a bounded number of threads,
// never a thread per item: n may come from a file or from peers on the
// network (devices of a cluster, announcements on the LAN), and a thread
// each ran a process out of threads at a few thousand.
#ifndef SHOAL_UTIL_PARALLEL_FOR_H_
#define SHOAL_UTIL_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

namespace shoal {

// Calls fn(i) once for every i in [0, n), on the calling thread and up to
// max_threads - 1 more, each taking the next index when it is done; returns
// when every call has. A thread the system refuses leaves its share to the
// others. fn must not throw.
void ParallelFor(size_t n, size_t max_threads,
                 const std::function<void(size_t)>& fn);

}  // namespace shoal

#endif  // SHOAL_UTIL_PARALLEL_FOR_H_
