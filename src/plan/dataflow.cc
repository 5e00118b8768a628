#include "plan/dataflow.h"

#include <algorithm>
#include <set>

#include "plan/broadcast.h"

namespace shoal {

PlanFlow IndexFlow(const Plan& p) {
  PlanFlow f;
  f.incoming.assign(p.tasks.size(), 0);
  f.outgoing.assign(p.tasks.size(), {});
  for (size_t i = 0; i < p.transfers.size(); ++i) {
    const Transfer& x = p.transfers[i];
    const int xi = static_cast<int>(i);
    if (x.dst.task >= 0) f.incoming[x.dst.task]++;
    if (x.dst.task == kModelOutput) f.output_parts++;
    if (x.src.task >= 0) f.outgoing[x.src.task].push_back(xi);
    if (x.src.task == kModelInput) f.inputs.push_back(xi);
  }
  return f;
}

OutputRoute RouteOutputs(const Plan& p, const std::vector<int>& outgoing,
                         int device, int64_t seq) {
  OutputRoute r;
  r.broadcasts = BroadcastGroups(p, outgoing, device, seq);
  std::set<int> carried;
  for (const auto& g : r.broadcasts) carried.insert(g.begin(), g.end());
  for (int xi : outgoing) {
    if (carried.count(xi)) continue;
    const Transfer& x = p.transfers[xi];
    const int to =
        x.dst.task == kModelOutput ? -1 : p.DeviceOf(x.dst.task, seq);
    r.direct.push_back({xi, to, to == device});
  }
  return r;
}

OutputRoute RouteInput(const Plan& p, const std::vector<int>& inputs,
                       int64_t seq) {
  OutputRoute r = RouteOutputs(p, inputs, p.input_device, seq);
  std::stable_partition(r.direct.begin(), r.direct.end(),
                        [](const OutputRoute::Direct& d) { return d.here; });
  return r;
}

}  // namespace shoal
