#include "plan/broadcast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "plan/plan_verify.h"

namespace shoal {
namespace {

// A plan with the model input read whole by one task on each of `n`
// devices (LCP's shape), the input device 0, fan-out `fanout`.
Plan Star(int n, int fanout) {
  Plan p;
  p.broadcast.fanout = fanout;
  p.input_shape = {1, 4};
  p.input_name = "x";
  for (int d = 0; d < n; ++d) {
    p.devices.push_back(PlanDevice{"d" + std::to_string(d), 1.0, 0});
    Task t;
    t.id = d;
    t.name = "t" + std::to_string(d);
    t.devices = {d};
    p.tasks.push_back(t);
    p.transfers.push_back(
        Transfer{Endpoint{kModelInput, "x", Region::Full({1, 4})},
                 Endpoint{d, "x", Region::Full({1, 4})}, Merge::kCopy, ""});
  }
  return p;
}

std::vector<int> All(const Plan& p) {
  std::vector<int> v;
  for (size_t i = 0; i < p.transfers.size(); ++i) v.push_back(i);
  return v;
}

TEST(Broadcast, GroupsTheSameBytesForThreeOrMoreOtherDevices) {
  Plan p = Star(8, 2);
  auto g = BroadcastGroups(p, All(p), 0, 0);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0], (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));  // not 0: local
  // Two other devices: sent directly.
  EXPECT_TRUE(BroadcastGroups(Star(3, 2), All(Star(3, 2)), 0, 0).empty());
  // Fan-out 0: never.
  EXPECT_TRUE(BroadcastGroups(Star(8, 0), All(Star(8, 0)), 0, 0).empty());
  // Different regions are different bytes.
  p.transfers[3].src.region = Region{{0, 0}, {1, 2}};
  g = BroadcastGroups(p, All(p), 0, 0);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(std::count(g[0].begin(), g[0].end(), 3), 0);
}

TEST(Broadcast, HopsSplitTheDevicesIntoFanoutRuns) {
  Plan p = Star(8, 2);
  const std::vector<int> xs{1, 2, 3, 4, 5, 6, 7};
  auto hops = RelayHops(p, xs, 0, 0, 2);
  ASSERT_EQ(hops.size(), 2u);
  EXPECT_EQ(hops[0].device, 1);
  EXPECT_EQ(hops[0].deliver, std::vector<int>{1});
  EXPECT_EQ(hops[0].relay, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(hops[1].device, 5);
  EXPECT_EQ(hops[1].relay, (std::vector<int>{6, 7}));
  // A chain: one hop, relaying the rest.
  hops = RelayHops(p, xs, 0, 0, 1);
  ASSERT_EQ(hops.size(), 1u);
  EXPECT_EQ(hops[0].relay.size(), 6u);
  // Two transfers into one device travel together.
  p.transfers.push_back(p.transfers[2]);
  hops = RelayHops(p, {1, 2, 8, 3}, 0, 0, 3);
  ASSERT_EQ(hops.size(), 3u);
  EXPECT_EQ(hops[1].deliver, (std::vector<int>{2, 8}));
}

// Every device gets the bytes exactly once, from a device that has them,
// and no device sends more than the fan-out's share.
TEST(Broadcast, WireHopsReachEveryDeviceOnce) {
  for (int fanout : {0, 1, 2, 3}) {
    for (int n : {2, 4, 8, 13}) {
      const Plan p = Star(n, fanout);
      std::map<int, int> got, sent;
      std::set<int> have{0};
      for (const WireHop& h : WireHops(p, 0)) {
        EXPECT_TRUE(have.count(h.from)) << fanout << " " << n;
        have.insert(h.to);
        got[h.to]++;
        sent[h.from]++;
      }
      EXPECT_EQ(static_cast<int>(got.size()), n - 1);
      for (const auto& [d, k] : got) EXPECT_EQ(k, 1);
      const int most =
          fanout == 0 || n - 1 < kMinBroadcastDevices ? n - 1 : fanout;
      for (const auto& [d, k] : sent) EXPECT_LE(k, most) << fanout << " " << n;
    }
  }
}

// Every device's task broadcasts its slice to a task on each other device
// (the all-gather before a layer split by outputs): the relaying is spread,
// so every device sends the same number of messages.
TEST(Broadcast, AllGatherSpreadsTheRelays) {
  for (int n : {4, 6, 8}) {
    Plan p = Star(n, 2);
    p.transfers.clear();
    for (int d = 0; d < n; ++d) {
      Task t;
      t.id = n + d;
      t.name = "next" + std::to_string(d);
      t.devices = {d};
      p.tasks.push_back(t);
    }
    for (int src = 0; src < n; ++src) {
      for (int dst = 0; dst < n; ++dst) {
        p.transfers.push_back(
            Transfer{Endpoint{src, "y", Region::Full({1, 4})},
                     Endpoint{n + dst, "y", Region{{0, src}, {1, src + 1}}},
                     Merge::kCopy, ""});
      }
    }
    std::map<int, int> sent;
    for (const WireHop& h : WireHops(p, 0)) sent[h.from]++;
    ASSERT_EQ(static_cast<int>(sent.size()), n);
    for (const auto& [d, k] : sent) EXPECT_EQ(k, n - 1) << n << " " << d;
  }
}

TEST(Broadcast, ChunkSharesAddUpToTheWhole) {
  for (int64_t total : {0, 1, 1023, 1024, 1025, 40000, 150528}) {
    for (int parts : {1, 2, 3, 7, 50}) {
      int64_t sum = 0;
      for (int part = 0; part < parts; ++part) {
        const int64_t b = ChunkShareBytes(total, 1024, part, parts);
        EXPECT_GE(b, 0);
        sum += b;
      }
      EXPECT_EQ(sum, total) << total << " " << parts;
    }
  }
  // 4 chunks (1024, 1024, 1024, 100) over 3 parts.
  EXPECT_EQ(ChunkShareBytes(3172, 1024, 0, 3), 1124);
  EXPECT_EQ(ChunkShareBytes(3172, 1024, 2, 3), 1024);
}

// Scattered: the source sends each receiver a share, the receivers pass
// their share to all the others; every device gets the whole tensor once.
TEST(Broadcast, ScatterSendsTheTensorOnceFromTheSource) {
  for (int n : {4, 8}) {
    for (int64_t elements : {10000, 300}) {  // 40 chunks; 2 chunks
      Plan p = Star(n, kMaxBroadcastFanout);
      p.broadcast.scatter = true;
      p.broadcast.chunk_bytes = 1024;
      p.input_shape = {1, elements};
      for (auto& x : p.transfers) {
        x.src.region = x.dst.region = Region::Full({1, elements});
      }
      const int64_t whole = 4 * elements;
      auto hops = SourceHops(p, {1, 2, 3}, 0, 0);
      ASSERT_EQ(hops.size(), 3u);
      EXPECT_EQ(hops[1].deliver, std::vector<int>{2});
      EXPECT_EQ(hops[1].relay, (std::vector<int>{1, 3}));
      std::map<int, int64_t> got, sent;
      std::set<int> have{0};
      for (const WireHop& h : WireHops(p, 0)) {
        const int64_t b = WireHopBytes(p, h);
        EXPECT_GT(b, 0);
        got[h.to] += b;
        sent[h.from] += b;
        // A relay passes on only the share it was sent.
        if (h.from != 0) {
          EXPECT_TRUE(have.count(h.from * 100 + h.part));
        }
        if (h.from == 0) have.insert(h.to * 100 + h.part);
      }
      EXPECT_EQ(static_cast<int>(got.size()), n - 1);
      for (const auto& [d, b] : got) EXPECT_EQ(b, whole) << n << " " << d;
      EXPECT_EQ(sent[0], whole);
    }
  }
}

TEST(Broadcast, VerifyChecksTheSettings) {
  Plan p = Star(4, 2);
  p.broadcast.fanout = 99;
  EXPECT_NE(VerifyPlan(p).message().find("broadcast"), std::string::npos);
  p.broadcast.fanout = 2;
  p.broadcast.chunk_bytes = 0;
  EXPECT_FALSE(VerifyPlan(p).ok());
  p.broadcast.chunk_bytes = 1024;
  p.broadcast.fanout = 0;
  p.broadcast.scatter = true;
  EXPECT_NE(VerifyPlan(p).message().find("scatter"), std::string::npos);
}

}  // namespace
}  // namespace shoal
