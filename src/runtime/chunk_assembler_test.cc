#include "runtime/chunk_assembler.h"

#include <gtest/gtest.h>

#include "plan/broadcast.h"
#include "runtime/relay_messages.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

rpc::TensorMessage Header() {
  rpc::TensorMessage h;
  h.set_request("r1");
  h.set_seq(3);
  h.add_shape(10);
  return h;
}

// A plan whose broadcasts go in chunks of 1 KiB.
Plan KiBChunks(bool scatter = false) {
  Plan p;
  p.broadcast.fanout = 2;
  p.broadcast.chunk_bytes = 1024;
  p.broadcast.scatter = scatter;
  return p;
}

TEST(ChunkAssembler, ReassemblesChunksInAnyOrder) {
  std::string bytes;
  for (int i = 0; i < 2500; ++i) bytes.push_back(static_cast<char>(i * 7));
  RelayHop a{1, {4}, {5, 6}}, b{2, {7}, {}};
  auto sends = ChunkedSends(KiBChunks(), Header(), {a, b}, bytes);
  ASSERT_EQ(sends.size(), 6u);  // 3 chunks, to each of 2 hops
  EXPECT_EQ(sends[0].first, 1);
  EXPECT_EQ(sends[1].first, 2);
  EXPECT_EQ(sends[0].second.transfer(), 4);
  EXPECT_EQ(sends[0].second.relay_size(), 2);
  EXPECT_EQ(sends[5].second.data().size(), 2500u - 2048u);
  ChunkAssembler c;
  const auto expiry = Clock::now() + std::chrono::seconds(10);
  for (int i : {4, 0}) {  // hop a's chunks: the last, then the first
    auto r = c.Add(sends[i].second, WireSize{2500, true}, 1024, expiry);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->has_value());
  }
  EXPECT_EQ(c.held_bytes(), 2500);
  auto r = c.Add(sends[2].second, WireSize{2500, true}, 1024, expiry);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->data(), bytes);
  EXPECT_EQ((*r)->transfer(), 4);
  EXPECT_EQ((*r)->total_bytes(), 0);
  EXPECT_EQ(c.held_bytes(), 0);
}

// Scattered, each chunk goes to one hop in turn; a receiver puts together
// the chunks it was sent and those the others relay to it.
TEST(ChunkAssembler, ScatteredChunksGoOneHopEachAndReassemble) {
  std::string bytes;
  for (int i = 0; i < 4500; ++i) bytes.push_back(static_cast<char>(i * 3));
  RelayHop a{1, {4}, {5, 6}}, b{2, {5}, {4, 6}}, c{3, {6}, {4, 5}};
  auto sends = ChunkedSends(KiBChunks(true), Header(), {a, b, c}, bytes);
  ASSERT_EQ(sends.size(), 5u);  // 5 chunks, one hop each
  const int want[] = {1, 2, 3, 1, 2};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sends[i].first, want[i]) << "chunk " << i;
    EXPECT_EQ(sends[i].second.chunk_offset(), i * 1024);
    EXPECT_EQ(sends[i].second.relay_size(), 2);
  }
  EXPECT_EQ(sends[4].second.data().size(), 4500u - 4096u);
  EXPECT_EQ(sends[0].second.transfer(), 4);
  EXPECT_EQ(sends[1].second.transfer(), 5);
  // Device 3 (transfer 6): chunk 2 from the source, the rest relayed by
  // devices 1 and 2, readdressed to it.
  ChunkAssembler asm3;
  const auto expiry = Clock::now() + std::chrono::seconds(10);
  for (int i : {4, 2, 0, 3}) {
    RelayHop to3{3, {6}, {}};
    auto r = asm3.Add(Readdress(sends[i].second, to3), WireSize{4500, true},
                      1024, expiry);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->has_value());
  }
  auto r = asm3.Add(Readdress(sends[1].second, RelayHop{3, {6}, {}}),
                    WireSize{4500, true}, 1024, expiry);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->data(), bytes);
  EXPECT_EQ((*r)->transfer(), 6);
  // Fewer chunks than hops: the last hop is sent nothing.
  auto few = ChunkedSends(KiBChunks(true), Header(), {a, b, c},
                          std::string(1500, 'x'));
  ASSERT_EQ(few.size(), 2u);
  EXPECT_EQ(few[0].first, 1);
  EXPECT_EQ(few[1].first, 2);
}

TEST(ChunkAssembler, RefusesWhatThePlanDoesNotSay) {
  const std::string bytes(3000, 'x');
  auto sends =
      ChunkedSends(KiBChunks(), Header(), {RelayHop{1, {4}, {}}}, bytes);
  ChunkAssembler c;
  const auto expiry = Clock::now() + std::chrono::seconds(10);
  // The transfer holds 4000 bytes in the plan: a 3000-byte whole is wrong.
  auto r = c.Add(sends[0].second, WireSize{4000, true}, 1024, expiry);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("holds 4000"), std::string::npos);
  // A chunk off the chunk grid, or of the wrong size.
  rpc::TensorMessage odd = sends[1].second;
  odd.set_chunk_offset(1000);
  EXPECT_FALSE(c.Add(odd, WireSize{3000, true}, 1024, expiry).ok());
  odd = sends[1].second;
  odd.mutable_data()->push_back('y');
  EXPECT_FALSE(c.Add(odd, WireSize{3000, true}, 1024, expiry).ok());
  // The same chunk twice.
  ASSERT_TRUE(c.Add(sends[0].second, WireSize{3000, true}, 1024, expiry).ok());
  auto twice = c.Add(sends[0].second, WireSize{3000, true}, 1024, expiry);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("twice"), std::string::npos);
  // A failed request's chunks are dropped.
  c.Drop("r1");
  EXPECT_EQ(c.held_bytes(), 0);
}

TEST(ChunkAssembler, DropsWhatExpired) {
  const std::string bytes(3000, 'x');
  auto sends =
      ChunkedSends(KiBChunks(), Header(), {RelayHop{1, {4}, {}}}, bytes);
  ChunkAssembler c;
  ASSERT_TRUE(
      c.Add(sends[0].second, WireSize{3000, true}, 1024, Clock::now()).ok());
  EXPECT_EQ(c.held_bytes(), 3000);
  rpc::TensorMessage other = sends[0].second;
  other.set_request("r2");
  ASSERT_TRUE(c.Add(other, WireSize{3000, true}, 1024,
                    Clock::now() + std::chrono::seconds(10))
                  .ok());
  EXPECT_EQ(c.held_bytes(), 3000);  // r1's expired and went
}

}  // namespace
}  // namespace shoal
