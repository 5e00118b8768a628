// One-to-many transfers as pipelined broadcasts (docs/plan-format.md,
// "broadcast"). The transfers of one request that carry the same bytes (one
// source task, tensor and region) to several other devices go out in
// chunks that receivers forward as soon as they have them: down trees
// (each chunk to at most `fanout` of those devices, each forwarding it to
// a share of the rest, so the source's uplink carries the tensor `fanout`
// times instead of once per device), or scattered (each chunk to one
// receiver in turn, which passes it to all the others, so the source's
// uplink carries it once). LCP's input to seven branches, or an
// output-split layer's input to every device, go this way.
//
// The runtime (worker and coordinator), the simulator and the byte counts
// all build the same trees from these functions, so they agree on which
// link carries what.
#ifndef SHOAL_PLAN_BROADCAST_H_
#define SHOAL_PLAN_BROADCAST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

// fanout 2: the source sends a chunk twice and the tree is log2(devices)
// deep. On the Pi 3 links of the LCP paper (62 Mbit/s, 9 ms), LCP's 150 KB
// input reaches seven devices in about 75 ms this way, a chain (fanout 1)
// in about 95 ms, one message per device in about 140 ms.
constexpr int kDefaultBroadcastFanout = 2;
// 32 KiB: 4 ms on such a link, short against its latency, few enough
// messages that each one's CPU does not count.
constexpr int64_t kDefaultBroadcastChunkBytes = int64_t{32} << 10;
// Scattered, each receiver relays its chunks to all the others: smaller
// chunks spread a tensor over more receivers and start the relays sooner.
// 8 KiB cuts LCP's 150 KB input into 19 chunks for 7 receivers; on the
// Pi 3 links the simulator puts LCP AlexNet split8 at 71 ms with 8 KiB
// chunks, 76 with 16 KiB, 86 with 4 KiB (each message's own cost) or
// 32 KiB (two receivers get none), against 96 down binary trees.
constexpr int64_t kDefaultScatterChunkBytes = int64_t{8} << 10;
// Fewer receivers than this: one message each, straight from the source
// (a tree would only add a hop).
constexpr int kMinBroadcastDevices = 3;
constexpr int kMaxBroadcastFanout = 16;
constexpr int64_t kMinBroadcastChunkBytes = 1024;
constexpr int64_t kMaxBroadcastChunkBytes = int64_t{64} << 20;

// The ways `shoal plan --broadcast` names: "scatter" (fan-out 16, 8 KiB
// chunks, scattered), "tree" (binary trees, 32 KiB chunks), "chain"
// (fan-out 1) and "direct" (fan-out 0: one message per device).
StatusOr<BroadcastSettings> NamedBroadcast(const std::string& name);
// One of those names for `b`, or "trees of fan-out N" for another.
std::string BroadcastName(const BroadcastSettings& b);

// One send of a broadcast, from the device that holds the data to
// `device`: the bytes of the transfers in `deliver` (all into `device`;
// the first is the message's own transfer), which `device` forwards on for
// the transfers in `relay`.
struct RelayHop {
  int device = 0;
  std::vector<int> deliver;
  std::vector<int> relay;
};

// Whether transfers a and b carry the same bytes: one source endpoint.
bool SameSource(const Transfer& a, const Transfer& b);

// The broadcasts among the transfers `out` that device `self` sends for
// request `seq` (the transfers out of one task, or the model input's): the
// groups of transfers with one source endpoint whose destinations, other
// than `self` and the coordinator, are at least kMinBroadcastDevices
// devices. Empty when the plan's broadcast fanout is 0. A transfer in no
// group is sent on its own.
std::vector<std::vector<int>> BroadcastGroups(const Plan& p,
                                              const std::vector<int>& out,
                                              int self, int64_t seq);

// The sends by which device `self` passes on `transfers` (one source
// endpoint, none into `self`): their devices in index order starting after
// `self` and wrapping round, cut into min(fanout, devices) runs of nearly
// equal length; each run's first device receives, and relays to the rest of
// its run.
std::vector<RelayHop> RelayHops(const Plan& p,
                                const std::vector<int>& transfers, int self,
                                int64_t seq, int fanout);

// The first sends of a broadcast from the device `self` that holds the
// data (-1: the coordinator, for the model input): RelayHops with the
// plan's fan-out, or, when the plan scatters, one hop to every receiving
// device, each to relay to all the others (by RelayHops with the plan's
// fan-out, as any relay) the chunks it is sent.
std::vector<RelayHop> SourceHops(const Plan& p,
                                 const std::vector<int>& transfers, int self,
                                 int64_t seq);

// Whether chunk `chunk` of a broadcast goes to source hop `hop` of `hops`:
// every chunk to every hop of a tree; chunk i to hop i mod hops when the
// plan scatters.
bool ChunkGoesTo(const Plan& p, int64_t chunk, int hop, int hops);

// The bytes of a broadcast's chunks `part`, `part + parts`, ... out of
// `total` bytes cut in chunks of `chunk_bytes` (all of them when parts is
// 1).
int64_t ChunkShareBytes(int64_t total, int64_t chunk_bytes, int part,
                        int parts);

// One message between two devices: transfer `transfer`'s bytes from `from`
// to `to` (a relay hop carries the bytes of the transfer it delivers). In
// a scattered broadcast, the hops under source hop `part` of `parts` carry
// only that hop's chunks (ChunkShareBytes).
struct WireHop {
  int transfer = 0;
  int from = 0;
  int to = 0;
  int part = 0;
  int parts = 1;
};

// The bytes hop `h` carries.
int64_t WireHopBytes(const Plan& p, const WireHop& h);

// Every message between devices that request `request` of plan p sends,
// broadcasts expanded into their trees; the coordinator's sends of the
// model input count as the input device's. A tree moves the same bytes
// into each device as direct sends do (fewer where one device reads the
// same bytes for two tasks): what it changes is who sends them.
std::vector<WireHop> WireHops(const Plan& p, int64_t request);

}  // namespace shoal

#endif  // SHOAL_PLAN_BROADCAST_H_
