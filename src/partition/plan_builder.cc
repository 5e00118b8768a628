// Building a plan (partition/plan_builder.h): the walk over the model's
// nodes, the tasks and their weights, and the plan's last touches.
#include "partition/plan_builder.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "partition/layer_split.h"
#include "partition/plan_builder_impl.h"
#include "plan/deal.h"

namespace shoal {
namespace plan_build {

StatusOr<Plan> PlanBuilder::Build() {
  RETURN_IF_ERROR(Init());
  std::map<std::string, const SpatialChain*> chain_of;
  for (const auto& ch : req_.spatial) chain_of[ch.nodes.front()] = &ch;
  for (const auto& n : g_.nodes) {
    if (placed_.count(n.name)) continue;
    auto sc = chain_of.find(n.name);
    auto lc = req_.layers.find(n.name);
    if (sc != chain_of.end()) {
      RETURN_IF_ERROR(PlaceSpatial(*sc->second));
    } else if (lc != req_.layers.end() && lc->second.scheme != Scheme::kWhole) {
      RETURN_IF_ERROR(PlaceSplit(n, lc->second));
    } else {
      auto pl = req_.placement.find(n.name);
      RETURN_IF_ERROR(PlaceWhole(n, pl != req_.placement.end()
                                        ? pl->second
                                        : std::vector<int>{req_.hub}));
    }
  }
  return Finish();
}

Status PlanBuilder::Init() {
  if (g_.inputs.size() != 1 || g_.outputs.size() != 1) {
    return Unsupported("model " + g_.name + " has " +
                       std::to_string(g_.inputs.size()) + " inputs and " +
                       std::to_string(g_.outputs.size()) +
                       " outputs; plans need exactly one of each");
  }
  if (req_.devices.empty()) return InvalidArgument("no devices to plan for");
  plan_.strategy = req_.strategy;
  plan_.model = req_.model;
  plan_.devices = req_.devices;
  plan_.input_device = req_.hub;
  plan_.output_device = req_.output_device >= 0 ? req_.output_device : req_.hub;
  whole_scheme_ = req_.whole_scheme;
  plan_.input_name = g_.inputs[0];
  plan_.input_shape = g_.tensors.at(g_.inputs[0]).shape;
  plan_.input_pixels = req_.input_pixels;
  plan_.broadcast = req_.broadcast;
  plan_.wire = req_.wire;
  plan_.output_name = g_.outputs[0];
  plan_.output_shape = g_.tensors.at(g_.outputs[0]).shape;
  double sum = 0;
  for (const auto& d : req_.devices) sum += d.share;
  for (const auto& d : req_.devices) {
    if (!(d.share > 0)) {
      return InvalidArgument("device " + d.name + " has share " +
                             std::to_string(d.share) +
                             "; shares must be positive");
    }
    shares_.push_back(d.share / sum);
  }
  Dist in;
  in.holders.push_back(Holder{kModelInput, Region::Full(plan_.input_shape)});
  dist_[plan_.input_name] = in;
  return Status::Ok();
}

const Shape& PlanBuilder::ShapeOf(const std::string& t) const {
  return g_.tensors.at(t).shape;
}

Status PlanBuilder::Group(const std::vector<int>& named,
                          const std::string& what, std::vector<int>* devs,
                          std::vector<double>* shares) const {
  devs->clear();
  shares->clear();
  if (named.empty()) {
    for (int d = 0; d < N(); ++d) devs->push_back(d);
    *shares = shares_;
    return Status::Ok();
  }
  double sum = 0;
  std::set<int> seen;
  for (int d : named) {
    if (d < 0 || d >= N() || !seen.insert(d).second) {
      return InvalidArgument(what + ": device " + std::to_string(d) +
                             " is out of range or named twice");
    }
    sum += shares_[d];
  }
  *devs = named;
  for (int d : named) shares->push_back(shares_[d] / sum);
  return Status::Ok();
}

int PlanBuilder::NewTask(const std::string& name, std::vector<int> devices,
                         const std::string& layer, Scheme scheme) {
  Task t;
  t.id = static_cast<int>(plan_.tasks.size());
  t.name = name;
  t.devices = std::move(devices);
  t.layer = layer;
  t.scheme = SchemeName(scheme);
  t.fragment.name = name;
  plan_.tasks.push_back(std::move(t));
  return plan_.tasks.back().id;
}

int PlanBuilder::LatestSource(const Node& n, int task) const {
  int latest = -1;
  for (const auto& in : n.inputs) {
    if (in.empty() || g_.tensors.at(in).is_weight()) continue;
    if (task >= 0 && plan_.tasks[task].fragment.FindTensor(in)) continue;
    for (const auto& h : dist_.at(in).holders)
      latest = std::max(latest, h.task);
  }
  return latest;
}

bool PlanBuilder::NewRemoteSource(const Node& n, int t) const {
  const Task& task = plan_.tasks[t];
  if (task.fragment.nodes.empty()) return false;
  std::set<int> sources;
  for (const Transfer& x : plan_.transfers) {
    if (x.dst.task == t) sources.insert(x.src.task);
  }
  const std::set<int> mine(task.devices.begin(), task.devices.end());
  for (const auto& in : n.inputs) {
    if (in.empty() || g_.tensors.at(in).is_weight() ||
        task.fragment.FindTensor(in) || !dist_.count(in)) {
      continue;
    }
    for (const auto& h : dist_.at(in).holders) {
      if (!mine.count(DeviceOfTask(h.task)) && !sources.count(h.task)) {
        return true;
      }
    }
  }
  return false;
}

int PlanBuilder::WholeTaskFor(const Node& n, const std::vector<int>& devices) {
  auto it = open_.find(devices);
  if (it != open_.end()) {
    const int t = it->second;
    bool partial_input = false;
    for (const auto& in : n.inputs) {
      if (in.empty() || !dist_.count(in)) continue;
      if (plan_.tasks[t].fragment.FindTensor(in)) continue;
      partial_input |= dist_.at(in).kind == Dist::kPartials;
    }
    if (LatestSource(n, t) < t && !partial_input && !NewRemoteSource(n, t)) {
      return t;
    }
  }
  std::string name = "whole";
  if (devices.size() == 1 && devices[0] != req_.hub) {
    name = "stage";
  }
  const int t = NewTask(name + "#" + std::to_string(plan_.tasks.size()) + "@" +
                            DeviceList(devices),
                        devices, "", whole_scheme_);
  open_[devices] = t;
  return t;
}

std::string PlanBuilder::DeviceList(const std::vector<int>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? "," : "") + std::to_string(d[i]);
  return s;
}

Status PlanBuilder::AddWeights(int task, const std::vector<WeightSlice>& ws) {
  Task& t = plan_.tasks[task];
  for (const auto& w : ws) {
    if (t.fragment.FindTensor(w.name)) continue;
    RETURN_IF_ERROR(t.fragment.AddWeight(w.name, w.region.extent()));
    t.weights.push_back(w);
  }
  return Status::Ok();
}

Status PlanBuilder::AddWholeWeights(int task, const Node& n) {
  std::vector<WeightSlice> ws;
  for (const auto& w : g_.WeightInputs(n)) {
    ws.push_back(WeightSlice{w, w, Region::Full(ShapeOf(w))});
  }
  return AddWeights(task, ws);
}

StatusOr<Plan> PlanBuilder::Finish() {
  for (const auto& n : g_.nodes) {
    // A note says how the builder placed a layer where it departed from
    // the layer's choice (an fc split on the boxes where its inputs lie).
    auto it = req_.layers.find(n.name);
    if (notes_.count(n.name)) {
      plan_.decisions.push_back(notes_.at(n.name));
    } else if (it != req_.layers.end()) {
      plan_.decisions.push_back(LayerDecision{
          n.name, SchemeName(it->second.scheme), it->second.reason});
    }
  }
  for (const auto& ch : req_.spatial) {
    for (const auto& name : ch.nodes) {
      plan_.decisions.push_back(LayerDecision{name, "spatial", ch.reason});
    }
  }
  // The output goes to the output device.
  const Dist& d = dist_.at(plan_.output_name);
  const std::string layer = d.layer;
  for (const auto& h : d.holders) {
    if (h.owned.empty()) continue;
    plan_.transfers.push_back(Transfer{
        Endpoint{h.task, NameIn(h, plan_.output_name),
                 d.kind == Dist::kPartials ? h.region.RelativeTo(h.region)
                                           : h.owned.RelativeTo(h.region)},
        Endpoint{kModelOutput, plan_.output_name, h.owned},
        d.kind == Dist::kPartials ? Merge::kSum : Merge::kCopy,
        layer.empty() ? plan_.output_name : layer});
    if (d.kind == Dist::kWhole) break;
  }
  // A task's outputs are the tensors others read from it (inputs it
  // forwards are sent as they arrived).
  for (const auto& x : plan_.transfers) {
    if (x.src.task < 0) continue;
    Graph& f = plan_.tasks[x.src.task].fragment;
    const bool is_input = std::find(f.inputs.begin(), f.inputs.end(),
                                    x.src.tensor) != f.inputs.end();
    if (!is_input && std::find(f.outputs.begin(), f.outputs.end(),
                               x.src.tensor) == f.outputs.end()) {
      f.outputs.push_back(x.src.tensor);
    }
  }
  RemoveUnreadTasks();
  // Replicas (a node placed on several devices) take requests in
  // proportion to speed: dealt equally, the slow ones queue while the
  // fast ones idle. `data` and the planners' replicate form both get here.
  for (auto& t : plan_.tasks) {
    if (t.devices.size() < 2) continue;
    std::vector<double> w;
    for (int dev : t.devices) w.push_back(shares_[dev]);
    t.devices = DealInProportion(t.devices, w);
  }
  for (auto& t : plan_.tasks) {
    Status s = InferShapes(&t.fragment);
    if (s.ok() && !t.fragment.nodes.empty()) s = VerifyGraph(t.fragment);
    if (!s.ok()) return s.WithContext("task " + t.name);
  }
  return std::move(plan_);
}

void PlanBuilder::RemoveUnreadTasks() {
  std::vector<int> new_id(plan_.tasks.size(), -1);
  std::vector<Task> kept;
  for (auto& t : plan_.tasks) {
    if (t.fragment.outputs.empty() && !t.fragment.nodes.empty()) continue;
    new_id[t.id] = static_cast<int>(kept.size());
    t.id = new_id[t.id];
    kept.push_back(std::move(t));
  }
  if (kept.size() == plan_.tasks.size()) {
    plan_.tasks = std::move(kept);
    return;
  }
  std::vector<Transfer> transfers;
  for (auto x : plan_.transfers) {
    if (x.dst.task >= 0 && new_id[x.dst.task] < 0) continue;
    if (x.src.task >= 0) x.src.task = new_id[x.src.task];
    if (x.dst.task >= 0) x.dst.task = new_id[x.dst.task];
    transfers.push_back(std::move(x));
  }
  plan_.tasks = std::move(kept);
  plan_.transfers = std::move(transfers);
}

}  // namespace plan_build

bool IsSplittableLayer(const Graph& g, const Node& n) {
  return CheckSplittable(g, n).ok();
}

StatusOr<Plan> BuildPlan(const BuildRequest& req) {
  plan_build::PlanBuilder b(req);
  return b.Build();
}

}  // namespace shoal
