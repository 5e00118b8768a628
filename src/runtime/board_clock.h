// An emulated board's clock across processes. A board's message carries
// when, in board time, the sending board's CPU and link were done with it,
// on the host's steady clock; the receiving board counts its own CPU for it
// from then, not from when this host's gRPC got it there (task_scheduler.h
// says what the board clock is for). The stamp means something only to a
// process of the same boot, where the steady clock is the same one.
#ifndef SHOAL_RUNTIME_BOARD_CLOCK_H_
#define SHOAL_RUNTIME_BOARD_CLOCK_H_

#include <chrono>
#include <cstdint>

#include "shoal.pb.h"

namespace shoal {

// Names this host's steady clock, which every process of one boot shares
// (network namespaces too): a hash of /proc/sys/kernel/random/boot_id; 0
// where it cannot be read.
uint64_t SteadyClockId();

// Stamps `m` with `ready` on this host's clock (nothing where the clock has
// no name).
void StampBoardReady(std::chrono::steady_clock::time_point ready,
                     rpc::TensorMessage* m);
void ClearBoardReady(rpc::TensorMessage* m);

// When the sender stamped `m` ready, if on this host's clock; else when it
// was `received`. A stamp later than `received` by more than the request's
// remaining time, or a minute, counts as that much: a peer cannot hold a
// handler longer.
std::chrono::steady_clock::time_point BoardArrival(
    const rpc::TensorMessage& m,
    std::chrono::steady_clock::time_point received);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_BOARD_CLOCK_H_
