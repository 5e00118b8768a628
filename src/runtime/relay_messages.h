// The messages of a broadcast (plan/broadcast.h), as the device that holds
// the data and each device that forwards it send them.
#ifndef SHOAL_RUNTIME_RELAY_MESSAGES_H_
#define SHOAL_RUNTIME_RELAY_MESSAGES_H_

#include <string>
#include <utility>
#include <vector>

#include "plan/broadcast.h"
#include "shoal.pb.h"
#include "util/status.h"

namespace shoal {

// `header` (request, shape, encoding, ...; no data, transfer or relay)
// readdressed to hop `h`: its first delivery as the transfer, the rest of
// its deliveries and its relays as the relay list.
rpc::TensorMessage Readdress(const rpc::TensorMessage& header,
                             const RelayHop& h);

// The chunks of `bytes` (the encoded region) for the source hops `hops`
// (SourceHops) of a broadcast of plan `p`, in the order to send them: chunk
// by chunk, each to every hop of a tree, so that every subtree starts on
// the first chunk; to one hop in turn when the plan scatters
// (ChunkGoesTo).
std::vector<std::pair<int, rpc::TensorMessage>> ChunkedSends(
    const Plan& p, const rpc::TensorMessage& header,
    const std::vector<RelayHop>& hops, const std::string& bytes);

// Splits message m's relay list into the transfers device `device`
// delivers (added to `local`) and those it forwards, after checking that
// each is a transfer of plan `p` with m's source, named once: a peer cannot
// make a device send what the plan does not send.
Status SplitRelay(const Plan& p, int device, const rpc::TensorMessage& m,
                  std::vector<int>* local, std::vector<int>* onward);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_RELAY_MESSAGES_H_
