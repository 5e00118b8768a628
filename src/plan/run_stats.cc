#include "plan/run_stats.h"

namespace shoal {

RunStats EmptyRunStats(const Plan& p) {
  RunStats s;
  s.bytes_sent.assign(p.devices.size(), 0);
  s.bytes_received.assign(p.devices.size(), 0);
  s.task_ms.assign(p.tasks.size(), 0.0);
  return s;
}

void CountWireHop(const Plan& p, const WireHop& h, RunStats* s) {
  const Transfer& x = p.transfers[h.transfer];
  const int64_t whole = p.WireBytes(x);
  const int64_t b = WireHopBytes(p, h);
  // A scattered broadcast's hop carries a share of the elements too.
  const int64_t n =
      whole > 0 ? x.src.region.elements() * b / whole : x.src.region.elements();
  s->elements_total += n;
  s->bytes_total += b;
  s->bytes_sent[h.from] += b;
  s->bytes_received[h.to] += b;
  s->elements_per_layer[x.layer] += n;
}

RunStats CountCommunication(const Plan& plan, int64_t request) {
  RunStats s = EmptyRunStats(plan);
  for (const WireHop& h : WireHops(plan, request)) CountWireHop(plan, h, &s);
  return s;
}

}  // namespace shoal
