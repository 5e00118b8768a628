// How the planners (Procedure 1, the joint MILP) place one unit, what that
// costs on the latency model, and what moving data between two consecutive
// units' placements costs. Both planners price with these functions, and
// both hand their answer to the plan builder through ToRequest.
#ifndef SHOAL_PLANNER_PLACEMENT_H_
#define SHOAL_PLANNER_PLACEMENT_H_

#include <map>
#include <string>
#include <vector>

#include "partition/plan_builder.h"
#include "partition/strategy.h"
#include "planner/units.h"
#include "sim/latency_model.h"

namespace shoal {

enum class Form {
  kWhole,      // on one device
  kReplicate,  // whole on each of several devices, requests dealt by speed
  kLop,        // output split over a group (channel for a conv)
  kLip,        // input split over a group (filter for a conv), summed on hub
  kFuse1,      // lop whose parts stay for the next unit's fuse2
  kFuse2,
  kSpatial,  // strips of rows over a group
};
const char* FormName(Form f);

struct Placement {
  Form form = Form::kWhole;
  std::vector<int> devices;  // one for kWhole; the group otherwise
  bool operator==(const Placement& o) const {
    return form == o.form && devices == o.devices;
  }
};
using Assignment = std::vector<Placement>;  // one per unit

// Seconds and weights a unit (or a transition) puts on each device.
struct Load {
  bool ok = true;
  std::string why;                 // when not ok
  double seconds = 0;              // its contribution to the latency
  std::map<int, double> busy;      // device -> compute or send seconds
  std::map<int, int64_t> weights;  // device -> weight bytes held
};

class UnitPricer {
 public:
  UnitPricer(const Graph& g, const std::vector<PlanUnit>& units,
             const LatencyModel& m, int hub);

  // Shares of a group by measured speed (what split sizes follow).
  std::vector<double> Shares(const std::vector<int>& devices) const;
  // Fractions of the requests each replica of a group runs: the deal the
  // plan gets (DealInProportion by speed), so the price is the plan's.
  std::vector<double> ReplicaShares(const std::vector<int>& devices) const;
  Load Price(int u, const Placement& p) const;
  // Sends that bring unit u's input from the previous unit placed `prev`
  // (or, for u's other inputs and u == 0, from the hub) to placement `p`.
  Load Transition(int u, const Placement* prev, const Placement& p) const;
  // The output to the output device (the hub unless the last unit is whole).
  Load Finish(const Placement& last) const;
  // Whether `p` can follow `prev` at all (fuse2 needs fuse1 on its group).
  bool Compatible(const Placement& prev, const Placement& p) const;

  // How tensors travel (PlanOptions::wire, input_pixels): transfers are
  // priced at their wire bytes, as Plan::WireBytes prices the plan built.
  void SetWire(const WireSettings& wire, bool input_pixels);
  // Which layouts spatial units may take (PlanOptions::tiles).
  void SetTiles(TileShape tiles) { tiles_ = tiles; }
  TileShape tiles() const { return tiles_; }
  // Bytes on the wire of `bytes` of unit u's output as float32.
  int64_t OutputWireBytes(const PlanUnit& u, int64_t bytes) const;

  const LatencyModel& model() const { return m_; }
  int hub() const { return hub_; }
  const std::vector<PlanUnit>& units() const { return units_; }

  // The weight bytes device d may hold in the planners' sums: half of its
  // memory (WeightCapacity: cache and engine copy) after `Reserve`d bytes;
  // 0 when its memory is unlimited, at least 1 otherwise. A worker also
  // needs its largest weight once more while it reorders it, which a sum
  // cannot see; auto reserves it on a device a plan overflowed and plans
  // again (ReserveReorderRoom, auto_plan.cc).
  int64_t Capacity(int d) const;
  // Keeps at least `bytes` of device d's memory out of Capacity.
  void Reserve(int d, int64_t bytes);
  int64_t Reserved(int d) const;

 private:
  double Seconds(int d, const NodeCost& c) const {
    return m_.NodeSeconds(d, c);
  }
  // One form's busy seconds and weights per device, into `l`; false (with
  // l->why) when the unit cannot take that form on those devices.
  bool PriceWhole(const PlanUnit& u, const Placement& p, Load* l) const;
  bool PriceReplicas(const PlanUnit& u, const Placement& p, Load* l) const;
  bool PriceOutputSplit(const PlanUnit& u, const Placement& p, Load* l) const;
  bool PriceInputSplit(const PlanUnit& u, const Placement& p, Load* l) const;
  bool PriceRows(const PlanUnit& u, const Placement& p, Load* l) const;
  double SecondsWhole(const PlanUnit& u, int d) const;
  const Graph& g_;
  const std::vector<PlanUnit>& units_;
  const LatencyModel& m_;
  int hub_;
  std::vector<int64_t> reserved_;  // per device; copies plan apart
  WireSettings wire_;
  bool input_pixels_ = false;
  TileShape tiles_ = TileShape::kStrips;
};

// Sum of loads: the latency estimate is the sum of seconds; the busiest
// device is the throughput estimate.
struct Estimate {
  double latency_s = 0;
  double period_s = 0;  // busiest device's seconds per request
  bool ok = true;
  std::string why;
};
Estimate EstimateAssignment(const UnitPricer& pr, const Assignment& a);

// The builder request for an assignment; reasons[u] explains unit u.
StatusOr<BuildRequest> ToRequest(const Graph& g, const PlanOptions& opts,
                                 const std::vector<PlanUnit>& units,
                                 const Assignment& a,
                                 const std::vector<std::string>& reasons);

// The devices' names, "{laptop,pi4}".
std::string GroupName(const std::vector<PlanDevice>& devs,
                      const std::vector<int>& group);

}  // namespace shoal

#endif  // SHOAL_PLANNER_PLACEMENT_H_
