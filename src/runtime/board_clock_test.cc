#include "runtime/board_clock.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

rpc::TensorMessage Message(int64_t timeout_ms) {
  rpc::TensorMessage m;
  m.set_timeout_ms(timeout_ms);
  return m;
}

// A stamp on this host's clock is when the message arrived on the board's
// clock, earlier or later than this host got it.
TEST(BoardClock, AStampOnThisHostsClockIsTheArrival) {
  ASSERT_NE(SteadyClockId(), 0u) << "no /proc/sys/kernel/random/boot_id";
  const auto received = Clock::now();
  for (auto ready : {received - milliseconds(3), received + milliseconds(2)}) {
    rpc::TensorMessage m = Message(1000);
    StampBoardReady(ready, &m);
    EXPECT_EQ(BoardArrival(m, received), ready);
  }
}

// No stamp, a cleared one, or one on another host's clock: when it came.
TEST(BoardClock, WithoutAStampOnThisClockItIsWhenItCame) {
  const auto received = Clock::now();
  rpc::TensorMessage m = Message(1000);
  EXPECT_EQ(BoardArrival(m, received), received);
  StampBoardReady(received - milliseconds(5), &m);
  ClearBoardReady(&m);
  EXPECT_EQ(BoardArrival(m, received), received);
  StampBoardReady(received - milliseconds(5), &m);
  m.set_clock_id(m.clock_id() + 1);
  EXPECT_EQ(BoardArrival(m, received), received);
}

// A peer's stamp far ahead holds the receiver no longer than the request
// has left, and never over a minute.
TEST(BoardClock, AStampFarAheadIsCapped) {
  const auto received = Clock::now();
  rpc::TensorMessage m = Message(250);
  StampBoardReady(received + std::chrono::hours(5), &m);
  EXPECT_EQ(BoardArrival(m, received), received + milliseconds(250));
  m.set_timeout_ms(int64_t{24} * 3600 * 1000);
  EXPECT_EQ(BoardArrival(m, received), received + std::chrono::minutes(1));
}

}  // namespace
}  // namespace shoal
