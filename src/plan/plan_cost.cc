#include "plan/plan_cost.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "graph/cost.h"
#include "plan/broadcast.h"
#include "plan/run_stats.h"
#include "plan/task_weights.h"
#include "util/units.h"

namespace shoal {

std::vector<LinkTraffic> TrafficPerLink(const Plan& p, int64_t request) {
  std::map<std::pair<int, int>, LinkTraffic> links;
  for (const WireHop& h : WireHops(p, request)) {
    LinkTraffic& l = links[{h.from, h.to}];
    l.from = h.from;
    l.to = h.to;
    l.bytes += WireHopBytes(p, h);
    ++l.transfers;
  }
  std::vector<LinkTraffic> out;
  for (const auto& [k, l] : links) out.push_back(l);
  std::stable_sort(out.begin(), out.end(),
                   [](const LinkTraffic& a, const LinkTraffic& b) {
                     return a.bytes > b.bytes;
                   });
  return out;
}

int64_t PlanCost::max_weight_bytes_per_device() const {
  int64_t m = 0;
  for (int64_t b : weight_bytes_per_device) m = std::max(m, b);
  return m;
}

namespace {

// Per model node: weights and MACs on each device, from the fragments, and
// the scheme that placed it; per task, its MACs.
struct FragmentCosts {
  std::map<std::string, std::vector<int64_t>> w, m;
  std::map<std::string, std::string> scheme;
  std::vector<int64_t> task_macs;
};

// Also adds each task's weights and MACs to its devices' totals in `pc`.
StatusOr<FragmentCosts> CostFragments(const Plan& p, int64_t request,
                                      PlanCost* pc) {
  const size_t nd = p.devices.size();
  FragmentCosts fc;
  fc.task_macs.assign(p.tasks.size(), 0);
  for (const auto& t : p.tasks) {
    const int dev = p.DeviceOf(t.id, request);
    ASSIGN_OR_RETURN(GraphCost gc, ComputeGraphCost(t.fragment));
    for (const auto& nc : gc.nodes) {
      auto& wv = fc.w[nc.name];
      auto& mv = fc.m[nc.name];
      wv.resize(nd, 0);
      mv.resize(nd, 0);
      wv[dev] += nc.weight_elements;
      mv[dev] += nc.macs;
      fc.task_macs[t.id] += nc.macs;
      if (!fc.scheme.count(nc.name)) fc.scheme[nc.name] = t.scheme;
    }
    // A device listed several times (plan/deal.h) holds the weights once.
    for (int d : t.Replicas())
      pc->weight_bytes_per_device[d] += gc.weight_bytes();
    pc->macs_per_device[dev] += gc.macs;
  }
  for (const auto& d : p.decisions) {
    if (fc.scheme.count(d.layer)) fc.scheme[d.layer] = d.scheme;
  }
  return fc;
}

// A row per model node that holds weights, computes or communicates.
Status AddModelLayers(const Graph& model, const FragmentCosts& fc,
                      const RunStats& counted, size_t nd, PlanCost* pc) {
  ASSIGN_OR_RETURN(GraphCost mc, ComputeGraphCost(model));
  for (const auto& nc : mc.nodes) {
    if (nc.weight_elements == 0 && nc.macs == 0 &&
        !counted.elements_per_layer.count(nc.name)) {
      continue;
    }
    LayerPlanCost l;
    l.name = nc.name;
    l.scheme = fc.scheme.count(nc.name) ? fc.scheme.at(nc.name) : "whole";
    if (l.scheme == "merge" || l.scheme == "reduce" || l.scheme == "data")
      l.scheme = "whole";
    auto it = counted.elements_per_layer.find(nc.name);
    l.communication_elements =
        it == counted.elements_per_layer.end() ? 0 : it->second;
    l.weight_elements_per_device =
        fc.w.count(nc.name) ? fc.w.at(nc.name) : std::vector<int64_t>(nd, 0);
    l.macs_per_device =
        fc.m.count(nc.name) ? fc.m.at(nc.name) : std::vector<int64_t>(nd, 0);
    pc->layers.push_back(std::move(l));
  }
  return Status::Ok();
}

// Communication attributed to names that are not model nodes (the model
// output, say) still counts in the total; list it as its own row.
void AddOtherCommunication(const RunStats& counted, size_t nd, PlanCost* pc) {
  for (const auto& [name, n] : counted.elements_per_layer) {
    bool listed = false;
    for (const auto& l : pc->layers) listed |= l.name == name;
    if (!listed) {
      LayerPlanCost l;
      l.name = name;
      l.scheme = "whole";
      l.communication_elements = n;
      l.weight_elements_per_device.assign(nd, 0);
      l.macs_per_device.assign(nd, 0);
      pc->layers.push_back(std::move(l));
    }
  }
}

// T: longest path, a task starting after its inputs and after the
// previous task on its device.
int64_t MacsLongestPath(const Plan& p, int64_t request,
                        const std::vector<int64_t>& task_macs) {
  int64_t longest = 0;
  std::vector<int64_t> finish(p.tasks.size(), 0),
      device_free(p.devices.size(), 0);
  for (const auto& t : p.tasks) {
    int64_t start = device_free[p.DeviceOf(t.id, request)];
    for (const auto& x : p.transfers) {
      if (x.dst.task == t.id && x.src.task >= 0) {
        start = std::max(start, finish[x.src.task]);
      }
    }
    finish[t.id] = start + task_macs[t.id];
    device_free[p.DeviceOf(t.id, request)] = finish[t.id];
    longest = std::max(longest, finish[t.id]);
  }
  return longest;
}

}  // namespace

StatusOr<PlanCost> ComputePlanCost(const Plan& p, const Graph& model,
                                   int64_t request) {
  const size_t nd = p.devices.size();
  PlanCost pc;
  pc.weight_bytes_per_device.assign(nd, 0);
  pc.macs_per_device.assign(nd, 0);
  ASSIGN_OR_RETURN(FragmentCosts fc, CostFragments(p, request, &pc));
  const RunStats counted = CountCommunication(p, request);
  pc.communication_elements = counted.elements_total;
  RETURN_IF_ERROR(AddModelLayers(model, fc, counted, nd, &pc));
  AddOtherCommunication(counted, nd, &pc);
  pc.macs_longest_path = MacsLongestPath(p, request, fc.task_macs);
  return pc;
}

int64_t DeviceWeightMemory(int64_t weight_bytes, int64_t largest_weight) {
  return weight_bytes + largest_weight;
}

int64_t WeightCapacity(int64_t memory_bytes) { return memory_bytes; }

bool FitsWhole(int64_t weight_bytes, int64_t memory_bytes) {
  return memory_bytes <= 0 ||
         DeviceWeightMemory(weight_bytes, weight_bytes) <= memory_bytes;
}

std::vector<int64_t> LargestWeightPerDevice(const Plan& p) {
  std::vector<int64_t> largest(p.devices.size(), 0);
  for (const auto& t : p.tasks) {
    for (const auto& w : t.weights) {
      for (int d : t.devices) {
        largest[d] = std::max(largest[d], SliceBytes(t, w));
      }
    }
  }
  return largest;
}

std::vector<int64_t> PeakActivationPerDevice(const Plan& p) {
  std::vector<int64_t> peak(p.devices.size(), 0);
  for (const auto& t : p.tasks) {
    const int64_t a = PeakActivationBytes(t.fragment);
    for (int d : t.devices) peak[d] = std::max(peak[d], a);
  }
  return peak;
}

Status CheckPlanMemory(const Plan& p, const Graph& model) {
  int64_t total_capacity = 0;
  bool limited = true;
  for (const auto& d : p.devices) {
    limited &= d.memory_bytes > 0;
    total_capacity += WeightCapacity(d.memory_bytes);
  }
  ASSIGN_OR_RETURN(GraphCost gc, ComputeGraphCost(model));
  if (limited && gc.weight_bytes() > total_capacity) {
    return FailedPrecondition(
        "the cluster cannot hold model " + model.name +
        " under any plan: its weights take " + MiB(gc.weight_bytes()) +
        " but the " + std::to_string(p.devices.size()) + " devices have " +
        MiB(total_capacity) + " of memory together");
  }
  const auto wb = WeightBytesPerDevice(p);
  const auto largest = LargestWeightPerDevice(p);
  const auto act = PeakActivationPerDevice(p);
  for (size_t d = 0; d < p.devices.size(); ++d) {
    const int64_t mem = p.devices[d].memory_bytes;
    const int64_t need = DeviceWeightMemory(wb[d], largest[d]) + act[d];
    if (mem > 0 && need > mem) {
      return FailedPrecondition(
          "plan does not fit: device " + p.devices[d].name + " would need " +
          MiB(need) + " (" + MiB(wb[d]) + " of weights + " + MiB(largest[d]) +
          " while its largest weight is reordered + " + MiB(act[d]) +
          " of activations) but has " + MiB(mem) + " of memory (strategy " +
          p.strategy + ")");
    }
  }
  return Status::Ok();
}

}  // namespace shoal
