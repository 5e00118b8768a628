#include "partition/plan_builder.h"

#include <algorithm>
#include <set>
#include <utility>

#include "graph/cost.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "partition/layer_split.h"
#include "partition/model_chain.h"
#include "partition/spatial_split.h"
#include "partition/split_counts.h"
#include "plan/deal.h"

namespace shoal {

namespace {

// Where the data of one model tensor lives after the tasks placed so far.
struct Holder {
  // Most holders keep the tensor under its own name.
  Holder(int task, Region region, std::string tensor = "")
      : task(task),
        region(region),
        owned(std::move(region)),
        tensor(std::move(tensor)) {}

  int task;
  Region region;  // of the full tensor
  // What it serves to tasks on other devices: the region, except for the
  // strips of a fused segment (SpatialChain::owned), which compute more
  // rows than their own for their device's later layers; the owned parts
  // of a tensor do not overlap. Empty: it serves its own device only.
  Region owned;
  // The name the holder task has for it, when not the tensor's own: the
  // input of a concat whose output lives in the places of its inputs.
  std::string tensor;
};
struct Dist {
  enum Kind { kWhole, kParts, kPartials } kind = kWhole;
  std::vector<Holder> holders;
  std::string layer;  // the split layer that produced parts/partials
};

bool IsOutputSplit(Scheme s) {
  return s == Scheme::kLop || s == Scheme::kChannel || s == Scheme::kFuse1;
}
bool IsInputSplit(Scheme s) {
  return s == Scheme::kLip || s == Scheme::kFilter || s == Scheme::kFuse2;
}

class Builder {
 public:
  explicit Builder(const BuildRequest& r) : req_(r), g_(*r.graph) {}

  StatusOr<Plan> Build() {
    RETURN_IF_ERROR(Init());
    std::map<std::string, const SpatialChain*> chain_of;
    for (const auto& ch : req_.spatial) chain_of[ch.nodes.front()] = &ch;
    for (const auto& n : g_.nodes) {
      if (placed_.count(n.name)) continue;
      auto sc = chain_of.find(n.name);
      auto lc = req_.layers.find(n.name);
      if (sc != chain_of.end()) {
        RETURN_IF_ERROR(PlaceSpatial(*sc->second));
      } else if (lc != req_.layers.end() &&
                 lc->second.scheme != Scheme::kWhole) {
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

 private:
  Status Init() {
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
    plan_.output_device =
        req_.output_device >= 0 ? req_.output_device : req_.hub;
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

  const Shape& ShapeOf(const std::string& t) const {
    return g_.tensors.at(t).shape;
  }
  int N() const { return static_cast<int>(req_.devices.size()); }

  // The devices a split runs on (every device when none are named) and
  // their shares, normalised over the group.
  Status Group(const std::vector<int>& named, const std::string& what,
               std::vector<int>* devs, std::vector<double>* shares) const {
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

  int NewTask(const std::string& name, std::vector<int> devices,
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

  int DeviceOfTask(int task) const { return plan_.DeviceOf(task, 0); }

  // Largest task id holding any input of `n` that is not inside `task`.
  int LatestSource(const Node& n, int task) const {
    int latest = -1;
    for (const auto& in : n.inputs) {
      if (in.empty() || g_.tensors.at(in).is_weight()) continue;
      if (task >= 0 && plan_.tasks[task].fragment.FindTensor(in)) continue;
      for (const auto& h : dist_.at(in).holders)
        latest = std::max(latest, h.task);
    }
    return latest;
  }

  // Whether node `n` would make the open task `t`, which already computes
  // something, wait for a task on another device that it does not wait for
  // yet. Then `n` starts a new task, so that what `t` holds runs while that
  // input is on its way: the hub's own LCP branch runs while the other
  // branches compute, not after their activations arrive.
  bool NewRemoteSource(const Node& n, int t) const {
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

  // The open task of a device group for whole nodes: reused while it runs
  // after every task it would wait for.
  int WholeTaskFor(const Node& n, const std::vector<int>& devices) {
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
    const int t = NewTask(name + "#" + std::to_string(plan_.tasks.size()) +
                              "@" + DeviceList(devices),
                          devices, "", whole_scheme_);
    open_[devices] = t;
    return t;
  }

  static std::string DeviceList(const std::vector<int>& d) {
    std::string s;
    for (size_t i = 0; i < d.size(); ++i)
      s += (i ? "," : "") + std::to_string(d[i]);
    return s;
  }

  Status AddWeights(int task, const std::vector<WeightSlice>& ws) {
    Task& t = plan_.tasks[task];
    for (const auto& w : ws) {
      if (t.fragment.FindTensor(w.name)) continue;
      RETURN_IF_ERROR(t.fragment.AddWeight(w.name, w.region.extent()));
      t.weights.push_back(w);
    }
    return Status::Ok();
  }

  Status AddWholeWeights(int task, const Node& n) {
    std::vector<WeightSlice> ws;
    for (const auto& w : g_.WeightInputs(n)) {
      ws.push_back(WeightSlice{w, w, Region::Full(ShapeOf(w))});
    }
    return AddWeights(task, ws);
  }

  // Sums partial outputs on one device (the input device unless `device`
  // names another), so that consumers can read the complete tensor.
  Status MergePartials(const std::string& tensor, int device = -1) {
    if (device < 0) device = req_.hub;
    const int t = NewTask("merge " + tensor + "@" + std::to_string(device),
                          {device}, "", Scheme::kWhole);
    plan_.tasks[t].scheme = "merge";
    if (device == req_.hub) {
      RETURN_IF_ERROR(Need(t, tensor, Region::Full(ShapeOf(tensor)), ""));
      return Status::Ok();
    }
    Dist& d = dist_.at(tensor);
    for (const auto& h : d.holders) {
      plan_.transfers.push_back(
          Transfer{Endpoint{h.task, NameIn(h, tensor), h.region},
                   Endpoint{t, tensor, h.region}, Merge::kSum, d.layer});
    }
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddInput(tensor, ShapeOf(tensor)));
    d = Dist{Dist::kWhole, {Holder{t, Region::Full(ShapeOf(tensor))}}, ""};
    return Status::Ok();
  }

  // Reduce-scatter (BuildRequest::reduce_on_peers): every device holding
  // partial sums of `tensor` sums one slice of its channels, received from
  // each holder, instead of all of them going to the input device. Each
  // uplink then carries (G-1)/G of the tensor, where the input device's
  // downlink carried G-1 whole copies; a next input split over the same
  // devices reads the slices where they are. False, and nothing changed,
  // when the partials are not held one per device, the channels are too
  // few, or the holders more than kMaxReduceScatterDevices.
  StatusOr<bool> ScatterPartials(const std::string& tensor) {
    if (!req_.reduce_on_peers) return false;
    const Dist partials = dist_.at(tensor);
    const Shape& s = ShapeOf(tensor);
    if (partials.kind != Dist::kPartials || s.size() < 2) return false;
    std::vector<int> devs;
    double sum = 0;
    for (const auto& h : partials.holders) {
      if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1 ||
          !(h.region == Region::Full(s))) {
        return false;
      }
      const int dev = DeviceOfTask(h.task);
      if (std::find(devs.begin(), devs.end(), dev) != devs.end()) return false;
      devs.push_back(dev);
      sum += shares_[dev];
    }
    if (devs.size() < 2 || devs.size() > kMaxReduceScatterDevices) {
      return false;
    }
    std::vector<double> shares;
    for (int dev : devs) shares.push_back(shares_[dev] / sum);
    auto counts = SplitCounts(s[1], shares);
    if (!counts.ok()) return false;
    for (int64_t c : counts.value()) {
      if (c < 1) return false;
    }
    Dist out{Dist::kParts, {}, partials.layer};
    int64_t b = 0;
    for (size_t i = 0; i < devs.size(); ++i) {
      Region slice = Region::Full(s);
      slice.begin[1] = b;
      slice.end[1] = b + counts.value()[i];
      b = slice.end[1];
      const int t = NewTask("reduce " + tensor + "@" + std::to_string(devs[i]),
                            {devs[i]}, "", Scheme::kWhole);
      plan_.tasks[t].scheme = "reduce";
      for (const auto& h : partials.holders) {
        plan_.transfers.push_back(Transfer{
            Endpoint{h.task, NameIn(h, tensor), slice.RelativeTo(h.region)},
            Endpoint{t, tensor, Region::Full(slice.extent())}, Merge::kSum,
            partials.layer});
      }
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddInput(tensor, slice.extent()));
      out.holders.push_back(Holder{t, slice});
      reducers_.insert(t);
    }
    dist_[tensor] = std::move(out);
    return true;
  }

  // Partial sums that a split layer or strip chain reads: scattered over the
  // devices that hold them where that is on, else summed on the input
  // device.
  Status ResolvePartials(const std::string& tensor) {
    if (dist_.at(tensor).kind != Dist::kPartials) return Status::Ok();
    ASSIGN_OR_RETURN(bool scattered, ScatterPartials(tensor));
    return scattered ? Status::Ok() : MergePartials(tensor);
  }

  // Makes `tensor` (the part `want` of it) an input of `task`, with the
  // transfers that fill it from wherever it lives.
  Status Need(int task, const std::string& tensor, const Region& want,
              const std::string& consumer_layer) {
    Task& t = plan_.tasks[task];
    if (t.fragment.FindTensor(tensor)) return Status::Ok();
    auto it = dist_.find(tensor);
    if (it == dist_.end()) {
      return Internal("tensor " + tensor + " is read before it is computed");
    }
    Dist& d = it->second;
    const int dev = DeviceOfTask(task);
    // Data a split layer produced counts as that layer's communication when
    // it goes to the input device (the papers' gather and merge); the rest
    // counts for the layer that reads it.
    const bool from_split = d.kind != Dist::kWhole;
    const std::string layer =
        from_split && (dev == req_.hub || consumer_layer.empty())
            ? d.layer
            : consumer_layer;
    if (d.kind == Dist::kPartials) {
      // Only a whole task on the input device sums partials as it receives
      // them; every other reader's caller merges them (MergePartials) before
      // it makes the reader's task, since a task receives only from earlier
      // ones.
      const bool hub_whole = t.layer.empty() && dev == req_.hub;
      if (!hub_whole) {
        return Internal("task " + t.name + " reads the partial sums of " +
                        tensor + " before they are merged");
      }
      if (!(want == Region::Full(ShapeOf(tensor)))) {
        return Internal("partial sums of " + tensor + " read in part");
      }
      for (const auto& h : d.holders) {
        plan_.transfers.push_back(
            Transfer{Endpoint{h.task, NameIn(h, tensor), h.region},
                     Endpoint{task, tensor, want}, Merge::kSum, layer});
      }
      RETURN_IF_ERROR(
          plan_.tasks[task].fragment.AddInput(tensor, want.extent()));
      d = Dist{Dist::kWhole, {Holder{task, want}}, ""};
      return Status::Ok();
    }
    // A device that already received this part for another of its tasks
    // forwards that copy locally instead of receiving it twice; but not
    // when its own tasks hold all of it: then the forward would only make
    // this task wait for the other (a strip's interior for its edge).
    const bool single = plan_.tasks[task].devices.size() == 1;
    int64_t own = 0;
    for (const auto& h : d.holders) {
      if (h.task < 0 || DeviceOfTask(h.task) != dev) continue;
      if (auto cut = Intersect(h.region, want)) own += cut->elements();
    }
    const bool held_here = d.kind == Dist::kParts && own == want.elements();
    for (const auto& h : single && !held_here ? received_[{tensor, dev}]
                                              : std::vector<Holder>{}) {
      if (h.task < task && Contains(h.region, want)) {
        plan_.transfers.push_back(
            Transfer{Endpoint{h.task, tensor, want.RelativeTo(h.region)},
                     Endpoint{task, tensor, Region::Full(want.extent())},
                     Merge::kCopy, consumer_layer});
        return plan_.tasks[task].fragment.AddInput(tensor, want.extent());
      }
    }
    // A holder on this device with all of it (a fused segment's strip,
    // which computed the rows its device's later layers read) feeds it
    // alone; else the owned parts of the holders cover it.
    for (const auto& h : d.holders) {
      if (d.kind != Dist::kParts || h.task < 0 || DeviceOfTask(h.task) != dev ||
          h.owned == h.region || !Contains(h.region, want)) {
        continue;
      }
      plan_.transfers.push_back(Transfer{
          Endpoint{h.task, NameIn(h, tensor), want.RelativeTo(h.region)},
          Endpoint{task, tensor, Region::Full(want.extent())}, Merge::kCopy,
          consumer_layer});
      return plan_.tasks[task].fragment.AddInput(tensor, want.extent());
    }
    int64_t covered = 0;
    bool remote = false;
    for (const auto& h : d.holders) {
      if (h.owned.empty()) continue;
      auto cut = Intersect(h.owned, want);
      if (!cut) continue;
      // A whole holder feeds everything; stop after it.
      covered += cut->elements();
      remote |= h.task >= 0 && DeviceOfTask(h.task) != dev;
      plan_.transfers.push_back(Transfer{
          Endpoint{h.task, NameIn(h, tensor), cut->RelativeTo(h.region)},
          Endpoint{task, tensor, cut->RelativeTo(want)}, Merge::kCopy,
          d.kind == Dist::kWhole ? consumer_layer : layer});
      if (d.kind == Dist::kWhole) break;
    }
    if (covered != want.elements()) {
      return Internal("the parts of " + tensor + " do not cover " +
                      want.ToString());
    }
    if (remote && single)
      received_[{tensor, dev}].push_back(Holder{task, want});
    return plan_.tasks[task].fragment.AddInput(tensor, want.extent());
  }

  static const std::string& NameIn(const Holder& h, const std::string& t) {
    return h.tensor.empty() ? t : h.tensor;
  }

  // A concat whose inputs live on several devices is not gathered to run:
  // its output is where its inputs are, each input's holders its parts
  // (offset along the axis), and a reader takes its region straight from
  // them. LCP's branch outputs stay on their devices, so the classifier,
  // split by input features along the branches, reads nothing remote.
  StatusOr<bool> PlaceConcatOfParts(const Node& n) {
    if (!Concatenates(n) || n.outputs.size() != 1 || n.inputs.empty() ||
        !n.attrs.Has("axis")) {
      return false;
    }
    const Shape& shape = ShapeOf(n.outputs[0]);
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = n.attrs.GetInt("axis");
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    Dist out{Dist::kParts, {}, ""};
    std::set<int> devices;
    int64_t offset = 0;
    for (const auto& in : n.inputs) {
      auto it = dist_.find(in);
      if (in.empty() || g_.tensors.at(in).is_weight() || it == dist_.end() ||
          it->second.kind == Dist::kPartials) {
        return false;
      }
      for (const auto& h : it->second.holders) {
        if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1) {
          return false;
        }
        Holder moved{h.task, h.region, NameIn(h, in)};
        moved.region.begin[axis] += offset;
        moved.region.end[axis] += offset;
        moved.owned = moved.region;
        out.holders.push_back(std::move(moved));
        devices.insert(DeviceOfTask(h.task));
        if (it->second.kind == Dist::kWhole) break;  // one holder has it all
      }
      if (out.layer.empty()) out.layer = it->second.layer;
      offset += ShapeOf(in)[axis];
    }
    if (devices.size() < 2) return false;  // one device: the node is as good
    if (out.layer.empty()) out.layer = n.name;
    dist_[n.outputs[0]] = std::move(out);
    placed_.insert(n.name);
    notes_[n.name] = LayerDecision{
        n.name, "parts",
        "a concat of tensors on " + std::to_string(devices.size()) +
            " devices: its readers take their regions from where the inputs "
            "are, without gathering them"};
    return true;
  }

  // Whether tensor `name` is computed inside task t (not received), so its
  // extent there is the task's part of it.
  bool ComputedIn(int t, const std::string& name) const {
    const Graph& f = plan_.tasks[t].fragment;
    return f.FindTensor(name) != nullptr &&
           std::find(f.inputs.begin(), f.inputs.end(), name) == f.inputs.end();
  }
  // Whether `n` could run on channel slices of its input: elementwise, per
  // channel or a flatten (PlaceAlongParts, PlaceAlongSlices decide).
  static bool ChannelLocal(const Node& n) {
    const OpSchema* s = OpRegistry::Global().Find(n.op);
    if (s == nullptr || n.outputs.size() != 1) return false;
    return s->elementwise() || ActsPerChannel(n) || SplitFactsOf(n.op).relayout;
  }

  // ComputedIn, or the slice a reduce-scatter task summed.
  bool HeldIn(int t, const std::string& name) const {
    return ComputedIn(t, name) ||
           (reducers_.count(t) && plan_.tasks[t].fragment.FindTensor(name));
  }

  // Adds node `n` to task t, computing the part `out` of its output. A
  // Reshape of a part yields the part's extents, not the whole's.
  Status AddPartNode(int t, const Node& n, const Region& out) {
    Node part = n;
    if (SplitFactsOf(part.op).relayout && part.attrs.Has("shape")) {
      part.attrs.Set("shape", out.extent());
    }
    return plan_.tasks[t].fragment.AddNode(part);
  }

  // A node of one activation input that reads channel slices (of a
  // reduce-scatter, or of an output split whose output has several
  // readers) and acts on each channel alone (a pool, an activation) or
  // flattens them runs on each slice where it lives: the next layer split
  // by inputs over the same devices then reads its slices without any
  // message, and one split by outputs gathers the smaller pooled slices
  // from their holders instead of the whole tensor through one device.
  StatusOr<bool> PlaceAlongSlices(const Node& n) {
    std::string in;
    for (const auto& i : n.inputs) {
      if (i.empty() || g_.tensors.at(i).is_weight()) return false;
      if (!in.empty()) return false;
      in = i;
    }
    auto it = dist_.find(in);
    if (in.empty() || n.outputs.size() != 1 || it == dist_.end() ||
        it->second.kind != Dist::kParts) {
      return false;
    }
    const Shape& from = ShapeOf(in);
    const Shape& to = ShapeOf(n.outputs[0]);
    const bool relayout = SplitFactsOf(n.op).relayout;
    if (!relayout && !(ActsPerChannel(n) && from.size() == to.size() &&
                       from.size() >= 2 && from[1] == to[1])) {
      return false;
    }
    const Dist split = it->second;
    std::vector<Region> regions;
    for (const auto& h : split.holders) {
      if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1) return false;
      if (relayout) {
        auto m = MapThroughReshape(h.region, from, to);
        if (!m) return false;
        regions.push_back(*m);
      } else {
        for (size_t a = 0; a < from.size(); ++a) {
          if (a != 1 && (h.region.begin[a] != 0 || h.region.end[a] != from[a]))
            return false;
        }
        Region o = Region::Full(to);
        o.begin[1] = h.region.begin[1];
        o.end[1] = h.region.end[1];
        regions.push_back(o);
      }
    }
    Dist out{Dist::kParts, {}, split.layer};
    for (size_t k = 0; k < split.holders.size(); ++k) {
      const Holder& h = split.holders[k];
      int t = h.task;
      if (!HeldIn(t, in) || !h.tensor.empty()) {
        const int dev = DeviceOfTask(h.task);
        t = NewTask(n.name + "/slice@" + std::to_string(dev), {dev}, "",
                    whole_scheme_);
        RETURN_IF_ERROR(Need(t, in, h.region, n.name));
      }
      RETURN_IF_ERROR(AddPartNode(t, n, regions[k]));
      out.holders.push_back(Holder{t, regions[k]});
    }
    dist_[n.outputs[0]] = std::move(out);
    placed_.insert(n.name);
    notes_[n.name] = LayerDecision{n.name, "parts",
                                   n.op + " runs on each channel slice of " +
                                       in + " on the device that holds it"};
    return true;
  }

  // A flatten of a tensor split into parts that are not its channels (the
  // strips of rows of VGG's last pooling), read by one layer split by its
  // inputs (lip): each of that layer's devices gathers the channels its
  // slice of the inputs holds, a box of rows x channels from each strip's
  // device, and flattens them there. The map goes from every device to
  // every other (each uplink carries about its own strip once) and in one
  // step, where gathering it whole on the input device and handing out
  // the slices is two steps through that device's link.
  StatusOr<bool> PlaceRelayoutForInputSplit(const Node& n) {
    // A planner that placed the flatten itself (the MILP) priced that.
    if (!SplitFactsOf(n.op).relayout || n.inputs.empty() ||
        n.outputs.size() != 1 || req_.placement.count(n.name)) {
      return false;
    }
    const std::string& in = n.inputs[0];
    auto it = dist_.find(in);
    if (it == dist_.end() || it->second.kind != Dist::kParts) return false;
    // The reader, past elementwise ops (a dropout) that run on the slices.
    const Node* c = nullptr;
    for (std::string cur = n.outputs[0]; c == nullptr;) {
      const auto cons = g_.ConsumerIndices(cur);
      if (cons.size() != 1 || cur == plan_.output_name) return false;
      const Node& next = g_.nodes[cons[0]];
      if (next.inputs.empty() || next.inputs[0] != cur) return false;
      const OpSchema* sc = OpRegistry::Global().Find(next.op);
      const bool passes = sc != nullptr && sc->elementwise() &&
                          next.inputs.size() == 1 && next.outputs.size() == 1 &&
                          !req_.layers.count(next.name) &&
                          !req_.placement.count(next.name);
      if (!passes) {
        c = &next;
      } else {
        cur = next.outputs[0];
      }
    }
    auto lc = req_.layers.find(c->name);
    if (lc == req_.layers.end() || !IsInputSplit(lc->second.scheme)) {
      return false;
    }
    std::vector<int> group;
    std::vector<double> gshares;
    RETURN_IF_ERROR(
        Group(lc->second.devices, "layer " + c->name, &group, &gshares));
    const Shape& from = ShapeOf(in);
    const Shape& to = ShapeOf(n.outputs[0]);
    if (to.size() != 2 || InputSplitSize(g_, *c) != to[1]) return false;
    const int64_t units = InputUnits(g_, *c);
    auto counts = SplitCounts(units, gshares);
    if (!counts.ok() || units <= 0 || to[1] % units != 0) return false;
    const int64_t per = to[1] / units;
    std::vector<Region> outs, ins;
    int64_t b = 0;
    for (int64_t k : counts.value()) {
      if (k < 1) return false;
      Region o = Region::Full(to);
      o.begin[1] = b * per;
      o.end[1] = (b + k) * per;
      b += k;
      auto m = MapThroughReshape(o, to, from);
      if (!m) return false;
      outs.push_back(o);
      ins.push_back(*m);
    }
    const std::string layer = it->second.layer;
    Dist out{Dist::kParts, {}, layer};
    for (size_t k = 0; k < group.size(); ++k) {
      const int t = NewTask(n.name + "/slice@" + std::to_string(group[k]),
                            {group[k]}, "", whole_scheme_);
      RETURN_IF_ERROR(Need(t, in, ins[k], c->name));
      RETURN_IF_ERROR(AddPartNode(t, n, outs[k]));
      out.holders.push_back(Holder{t, outs[k]});
    }
    dist_[n.outputs[0]] = std::move(out);
    placed_.insert(n.name);
    notes_[n.name] = LayerDecision{
        n.name, "parts",
        n.op + " runs on each device of " + c->name +
            "'s input split, on the channels of " + in +
            " its slice reads, gathered from the devices that hold them"};
    return true;
  }

  // An elementwise node whose input is split into parts (the strips or
  // channel parts of a residual block's branches) runs on each part where
  // it lives. Gathering the parts to one device to add them would put that
  // device on the path of every block and move the parts there and back.
  // The part's own task takes the node when it computes every input there;
  // else a task of its own on that device receives them.
  StatusOr<bool> PlaceAlongParts(const Node& n) {
    const OpSchema* s = OpRegistry::Global().Find(n.op);
    if (s == nullptr || !s->elementwise() || n.outputs.size() != 1) {
      return false;
    }
    const Shape& shape = ShapeOf(n.outputs[0]);
    const Dist* parts = nullptr;
    for (const auto& in : n.inputs) {
      if (in.empty()) return false;
      const TensorInfo& t = g_.tensors.at(in);
      auto it = dist_.find(in);
      if (t.is_weight() || t.shape != shape || it == dist_.end() ||
          it->second.kind == Dist::kPartials) {
        return false;  // partial sums are added up whole (MergePartials)
      }
      // Of several split inputs, the one whose parts hold least: a fused
      // segment's shortcut holds more rows than the block's branch, which
      // computed only the rows the sum needs (their parts are the same
      // elsewhere).
      if (it->second.kind == Dist::kParts &&
          (parts == nullptr ||
           HeldElements(it->second) < HeldElements(*parts))) {
        parts = &it->second;
      }
    }
    if (parts == nullptr) return false;
    for (const auto& h : parts->holders) {
      if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1) return false;
    }
    Dist out{Dist::kParts, {}, parts->layer};
    const Dist split = *parts;  // Need below may change dist_
    for (const auto& h : split.holders) {
      int t = h.task;
      for (const auto& in : n.inputs) {
        if (!HeldIn(h.task, in)) t = -1;
      }
      if (t < 0) {
        const int dev = DeviceOfTask(h.task);
        t = NewTask(n.name + "/parts@" + std::to_string(dev), {dev}, "",
                    whole_scheme_);
        for (const auto& in : n.inputs) {
          RETURN_IF_ERROR(Need(t, in, h.region, n.name));
        }
      }
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(n));
      out.holders.push_back(Holder{t, h.region});
      out.holders.back().owned = h.owned;
    }
    dist_[n.outputs[0]] = out;
    placed_.insert(n.name);
    notes_[n.name] =
        LayerDecision{n.name, "parts",
                      n.op + " is elementwise, so it runs on each part of " +
                          n.inputs[0] + " on the device that holds it"};
    return true;
  }

  static int64_t HeldElements(const Dist& d) {
    int64_t n = 0;
    for (const auto& h : d.holders) n += h.region.elements();
    return n;
  }

  Status PlaceWhole(const Node& n, const std::vector<int>& devices) {
    // A channel-local node on partial sums runs where they are summed, one
    // slice per device (reduce-scatter), when the node is placed by default.
    if (req_.reduce_on_peers && ChannelLocal(n) &&
        !req_.placement.count(n.name)) {
      for (const auto& in : n.inputs) {
        if (!in.empty() && dist_.count(in))
          RETURN_IF_ERROR(ScatterPartials(in).status());
      }
    }
    ASSIGN_OR_RETURN(bool along, PlaceAlongParts(n));
    if (along) return Status::Ok();
    ASSIGN_OR_RETURN(bool sliced, PlaceAlongSlices(n));
    if (sliced) return Status::Ok();
    ASSIGN_OR_RETURN(bool relaid, PlaceRelayoutForInputSplit(n));
    if (relaid) return Status::Ok();
    if (devices.size() == 1) {
      ASSIGN_OR_RETURN(bool spread, PlaceConcatOfParts(n));
      if (spread) return Status::Ok();
    }
    // Partial sums read off the input device are merged first (on the
    // reading device when reductions are on peers, else on the input
    // device): the merge task must come before its reader, which it would
    // not if Need created it after the reader's task.
    if (devices.front() != req_.hub) {
      for (const auto& in : n.inputs) {
        auto it = dist_.find(in);
        if (it != dist_.end() && it->second.kind == Dist::kPartials) {
          RETURN_IF_ERROR(MergePartials(
              in, req_.reduce_on_peers && devices.size() == 1 ? devices.front()
                                                              : req_.hub));
        }
      }
    }
    const int t = WholeTaskFor(n, devices);
    for (const auto& in : n.inputs) {
      if (in.empty() || g_.tensors.at(in).is_weight()) continue;
      RETURN_IF_ERROR(Need(t, in, Region::Full(ShapeOf(in)), n.name));
    }
    RETURN_IF_ERROR(AddWholeWeights(t, n));
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(n));
    for (const auto& o : n.outputs) {
      dist_[o] = Dist{Dist::kWhole, {Holder{t, Region::Full(ShapeOf(o))}}, ""};
    }
    placed_.insert(n.name);
    if (req_.placement.empty() && !req_.layers.count(n.name)) {
      notes_[n.name] =
          LayerDecision{n.name, "whole",
                        "runs whole on " + req_.devices[devices[0]].name +
                            " (the input device): " + n.op +
                            " is not split by strategy " + req_.strategy};
    }
    return Status::Ok();
  }

  // Consumers that ride along with an output split: channel-local ops and
  // reshapes, each reading only the previous one's output. `regions` (the
  // parts of the layer's output) become the parts of the last one's output.
  // `steps` (optional) gets each follower's output parts.
  std::vector<const Node*> Followers(
      const Node& n, std::vector<Region>* regions, std::string* last,
      std::vector<std::vector<Region>>* steps = nullptr) {
    std::vector<const Node*> out;
    std::string cur = n.outputs[0];
    while (cur != plan_.output_name) {
      auto cons = g_.ConsumerIndices(cur);
      if (cons.size() != 1) break;
      const Node& c = g_.nodes[cons[0]];
      if (placed_.count(c.name) || req_.layers.count(c.name)) break;
      const Shape& from = ShapeOf(cur);
      const Shape& to = ShapeOf(c.outputs[0]);
      std::vector<Region> next;
      for (const auto& r : *regions) {
        if (SplitFactsOf(c.op).relayout) {
          auto m = MapThroughReshape(r, from, to);
          if (!m) break;
          next.push_back(*m);
        } else if (ActsPerChannel(c) && from.size() == to.size() &&
                   from.size() >= 2) {
          // Same channels; pooling changes only the spatial extents.
          Region o = Region::Full(to);
          o.begin[1] = r.begin[1];
          o.end[1] = r.end[1];
          if (from == to) o = r;
          next.push_back(o);
        } else {
          break;
        }
      }
      if (next.size() != regions->size()) break;
      *regions = std::move(next);
      if (steps) steps->push_back(*regions);
      out.push_back(&c);
      cur = c.outputs[0];
    }
    *last = cur;
    return out;
  }

  Status PlaceSplit(const Node& n, const LayerChoice& choice) {
    const Scheme s = choice.scheme;
    const std::string& in = n.inputs[0];
    // Partial sums are added up before the tasks that read them exist, so
    // the merge runs earlier than its readers.
    RETURN_IF_ERROR(ResolvePartials(in));
    std::vector<int> group;
    std::vector<double> gshares;
    RETURN_IF_ERROR(Group(choice.devices, "layer " + n.name, &group, &gshares));
    if (IsOutputSplit(s)) return PlaceOutputSplit(n, s, group, gshares);
    if (!IsInputSplit(s)) {
      return Internal("scheme " + std::string(SchemeName(s)) +
                      " is not a layer split");
    }
    return PlaceInputSplit(n, s, group, gshares);
  }

  // Each device computes its share of the layer's outputs, and the ops
  // after it that act per channel travel with it.
  Status PlaceOutputSplit(const Node& n, Scheme s,
                          const std::vector<int>& group,
                          const std::vector<double>& gshares) {
    const std::string& in = n.inputs[0];
    const int G = static_cast<int>(group.size());
    const int64_t size = OutputSplitSize(g_, n);
    auto counts = SplitCounts(size, gshares);
    if (!counts.ok()) {
      return counts.status().WithContext(
          "layer " + n.name + " (" + SchemeName(s) + "): its " +
          std::to_string(size) + " outputs cannot be split over " +
          std::to_string(G) + " devices");
    }
    std::vector<LayerPart> parts;
    std::vector<Region> regions;
    int64_t b = 0;
    for (int d = 0; d < G; ++d) {
      const int64_t e = b + counts.value()[d];
      ASSIGN_OR_RETURN(LayerPart p, SplitOutput(g_, n, b, e));
      regions.push_back(p.out_region);
      parts.push_back(std::move(p));
      b = e;
    }
    std::vector<Region> final_regions = regions;
    std::string final_tensor;
    std::vector<std::vector<Region>> follower_parts;
    auto followers =
        Followers(n, &final_regions, &final_tensor, &follower_parts);
    Dist out{Dist::kParts, {}, n.name};
    for (int d = 0; d < G; ++d) {
      const int t =
          NewTask(n.name + "/" + SchemeName(s) + "@" + std::to_string(group[d]),
                  {group[d]}, n.name, s);
      RETURN_IF_ERROR(Need(t, in, parts[d].in_region, n.name));
      RETURN_IF_ERROR(AddWeights(t, parts[d].weights));
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(parts[d].node));
      for (size_t k = 0; k < followers.size(); ++k) {
        const Node* f = followers[k];
        RETURN_IF_ERROR(AddWholeWeights(t, *f));
        RETURN_IF_ERROR(AddPartNode(t, *f, follower_parts[k][d]));
      }
      out.holders.push_back(Holder{t, final_regions[d]});
    }
    placed_.insert(n.name);
    for (const Node* f : followers) {
      placed_.insert(f->name);
      notes_[f->name] = LayerDecision{
          f->name, SchemeName(s),
          "travels with " + n.name + "'s split: " + f->op +
              " acts on each channel alone, so each device applies it to "
              "its own channels before sending"};
    }
    dist_[final_tensor] = out;
    return Status::Ok();
  }

  // Each device reads its share of the layer's inputs and holds a partial
  // sum of the whole output.
  Status PlaceInputSplit(const Node& n, Scheme s, const std::vector<int>& group,
                         const std::vector<double>& gshares) {
    const std::string& in = n.inputs[0];
    const int G = static_cast<int>(group.size());
    // Input split: follow the parts the input already has, so a fused pair
    // needs no communication in between; else split by the devices' shares.
    const int64_t size = InputSplitSize(g_, n);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    const Dist& di = dist_.at(in);
    if (di.kind == Dist::kParts && static_cast<int>(di.holders.size()) == G) {
      for (int d = 0; d < G; ++d) {
        const Region& r = di.holders[d].region;
        if (DeviceOfTask(di.holders[d].task) != group[d]) break;
        bool axis1_only = true;
        for (int a = 0; a < r.rank(); ++a) {
          if (a != 1 && !(r.begin[a] == 0 && r.end[a] == ShapeOf(in)[a])) {
            axis1_only = false;
          }
        }
        if (!axis1_only) break;
        ranges.push_back({r.begin[1], r.end[1]});
      }
      if (static_cast<int>(ranges.size()) != G) ranges.clear();
    }
    if (s == Scheme::kFuse2 && ranges.empty()) {
      return InvalidArgument("layer " + n.name +
                             " is the second of a fused "
                             "pair, but its input is not split by channels or "
                             "features on every device");
    }
    if (ranges.empty()) {
      // Whole units (channels of the feature map an fc reads flattened),
      // as the cost formulas count them.
      const int64_t units = InputUnits(g_, n);
      const int64_t per = size / units;
      auto counts = SplitCounts(units, gshares);
      if (!counts.ok()) {
        return counts.status().WithContext(
            "layer " + n.name + " (" + SchemeName(s) + "): its " +
            std::to_string(size) + " inputs cannot be split over " +
            std::to_string(G) + " devices");
      }
      int64_t b = 0;
      for (int64_t c : counts.value()) {
        ranges.push_back({b, b + c * per});
        b += c * per;
      }
    }
    Dist out{Dist::kPartials, {}, n.name};
    for (int d = 0; d < G; ++d) {
      ASSIGN_OR_RETURN(LayerPart p, SplitInput(g_, n, ranges[d].first,
                                               ranges[d].second, d == 0));
      const int t =
          NewTask(n.name + "/" + SchemeName(s) + "@" + std::to_string(group[d]),
                  {group[d]}, n.name, s);
      RETURN_IF_ERROR(Need(t, in, p.in_region, n.name));
      RETURN_IF_ERROR(AddWeights(t, p.weights));
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(p.node));
      out.holders.push_back(Holder{t, p.out_region});
    }
    placed_.insert(n.name);
    dist_[n.outputs[0]] = out;
    return Status::Ok();
  }

  // The box of `tensor`'s rows and columns that tasks on `device` hold
  // together (every channel of it), the one that shares most with `want`;
  // empty when none is there. Several tasks may hold it between them (the
  // parts of a tile cut for overlap): their union counts when it is a box.
  std::optional<Region> LocalBox(const std::string& tensor, int device,
                                 const Region& want) const {
    const Shape& s = ShapeOf(tensor);
    if (s.size() < 4) return std::nullopt;
    std::vector<Region> mine;
    for (const auto& h : dist_.at(tensor).holders) {
      if (h.task < 0 || DeviceOfTask(h.task) != device ||
          h.region.begin.size() != s.size()) {
        continue;
      }
      bool box = true;
      for (size_t a = 0; a < s.size(); ++a) {
        if (a != 2 && a != 3 &&
            (h.region.begin[a] != 0 || h.region.end[a] != s[a]))
          box = false;
      }
      if (box) mine.push_back(h.region);
    }
    if (mine.empty()) return std::nullopt;
    // The bounding box of them all, if they fill it (holders of one tensor
    // do not overlap); else the single one that overlaps `want` most.
    Region bound = mine[0];
    int64_t filled = 0;
    for (const Region& r : mine) {
      for (int a : {2, 3}) {
        bound.begin[a] = std::min(bound.begin[a], r.begin[a]);
        bound.end[a] = std::max(bound.end[a], r.end[a]);
      }
      filled += r.elements();
    }
    if (filled == bound.elements()) return bound;
    std::optional<Region> best;
    int64_t best_overlap = 0;
    for (const Region& r : mine) {
      auto x = Intersect(r, want);
      if (x && x->elements() > best_overlap) {
        best = r;
        best_overlap = x->elements();
      }
    }
    return best;
  }

  // A device's tile of a spatial chain, cut so that its halo arrives while
  // it computes: the box it can compute from its own input (the interior)
  // and the bands at its edges that also read a neighbour's: rows above
  // and below (every column of the tile), then columns left and right.
  // The edges come first (lower task ids run first on a worker when both
  // are ready): they finish early and go on to the neighbours, whose own
  // edges wait for them, while the interior runs. One part when the tile
  // reads nothing from another device, or when no interior is left.
  StatusOr<std::vector<std::pair<std::string, Tile>>> OverlapParts(
      const std::vector<const Node*>& nodes, int device, const Tile& tile) {
    std::vector<std::pair<std::string, Tile>> whole = {{"", tile}};
    if (!req_.overlap_halos) return whole;
    const std::string& in = nodes.front()->inputs[0];
    const std::optional<Region> local = LocalBox(in, device, tile.in_region);
    if (!local || Contains(*local, tile.in_region)) return whole;
    const int64_t lo = local->begin[2], hi = local->end[2];
    const int64_t clo = local->begin[3], chi = local->end[3];
    const bool strip = tile.out_region.end[3] - tile.out_region.begin[3] ==
                       ShapeOf(nodes.back()->outputs[0])[3];
    // A strip's interior reads every column it needs from here or none.
    if (strip && (clo > tile.in_region.begin[3] || chi < tile.in_region.end[3]))
      return whole;
    const int64_t b = tile.out_region.begin[2], e = tile.out_region.end[2];
    const int64_t cb = tile.out_region.begin[3], ce = tile.out_region.end[3];
    auto box = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      return TileBox(
          g_, nodes,
          strip ? TileBounds{r0, r1, 0, -1} : TileBounds{r0, r1, c0, c1});
    };
    // First and last output rows (then columns) that read only local
    // input; the input one output row reads moves monotonically with it.
    int64_t top = b, bottom = e, left = cb, right = ce;
    while (top < e) {
      ASSIGN_OR_RETURN(Tile one, box(top, top + 1, cb, ce));
      if (one.in_region.begin[2] >= lo) break;
      ++top;
    }
    while (bottom > top) {
      ASSIGN_OR_RETURN(Tile one, box(bottom - 1, bottom, cb, ce));
      if (one.in_region.end[2] <= hi) break;
      --bottom;
    }
    if (top >= bottom) return whole;
    if (!strip) {
      while (left < ce) {
        ASSIGN_OR_RETURN(Tile one, box(top, bottom, left, left + 1));
        if (one.in_region.begin[3] >= clo) break;
        ++left;
      }
      while (right > left) {
        ASSIGN_OR_RETURN(Tile one, box(top, bottom, right - 1, right));
        if (one.in_region.end[3] <= chi) break;
        --right;
      }
      if (left >= right) return whole;
    }
    // Each part recomputes the rows of the chain's inner layers that its
    // neighbour part also needs; past max_overlap_recompute times the
    // work the tile is better off waiting for its halo (a deep chain on a
    // thin strip).
    std::vector<std::pair<std::string, Tile>> parts;
    auto add = [&](const char* suffix, int64_t r0, int64_t r1, int64_t c0,
                   int64_t c1) -> Status {
      if (r0 >= r1 || c0 >= c1) return Status::Ok();  // no such edge
      ASSIGN_OR_RETURN(Tile t, box(r0, r1, c0, c1));
      parts.push_back({suffix, std::move(t)});
      return Status::Ok();
    };
    RETURN_IF_ERROR(add("-top", b, top, cb, ce));
    RETURN_IF_ERROR(add("-bottom", bottom, e, cb, ce));
    RETURN_IF_ERROR(add("-left", top, bottom, cb, left));
    RETURN_IF_ERROR(add("-right", top, bottom, right, ce));
    RETURN_IF_ERROR(add("", top, bottom, left, right));
    double whole_work = 0, split_work = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g_, *nodes[i]));
      const Shape& o = ShapeOf(nodes[i]->outputs[0]);
      const double per_cell = double(c.macs + c.output_elements) /
                              double(std::max<int64_t>(1, o[2] * o[3]));
      whole_work += per_cell * double(tile.rows[i] * tile.cols[i]);
      for (const auto& part : parts)
        split_work +=
            per_cell * double(part.second.rows[i] * part.second.cols[i]);
    }
    if (split_work > req_.max_overlap_recompute * whole_work) return whole;
    return parts;
  }

  Status PlaceSpatial(const SpatialChain& ch) {
    std::vector<const Node*> nodes;
    for (const auto& name : ch.nodes) {
      const Node* n = g_.FindNode(name);
      if (n == nullptr)
        return InvalidArgument("spatial chain names unknown node " + name);
      nodes.push_back(n);
    }
    std::vector<int> group;
    std::vector<double> gshares;
    RETURN_IF_ERROR(Group(ch.devices, "spatial chain from " + ch.nodes.front(),
                          &group, &gshares));
    std::vector<Tile> tiles;
    if (ch.rows.empty()) {
      ASSIGN_OR_RETURN(tiles, TileChain(g_, nodes, gshares, ch.tiles_per_band));
    } else {
      if (ch.rows.size() != group.size() || ch.owned.size() != group.size()) {
        return InvalidArgument("spatial chain from " + ch.nodes.front() +
                               ": rows for " + std::to_string(ch.rows.size()) +
                               " tiles on " + std::to_string(group.size()) +
                               " devices");
      }
      for (const auto& [b, e] : ch.rows) {
        ASSIGN_OR_RETURN(Tile t, TileRows(g_, nodes, b, e));
        tiles.push_back(std::move(t));
      }
    }
    const std::string& in = nodes.front()->inputs[0];
    const std::string& out = nodes.back()->outputs[0];
    RETURN_IF_ERROR(ResolvePartials(in));
    Dist d{Dist::kParts, {}, nodes.front()->name};
    for (size_t dev = 0; dev < group.size(); ++dev) {
      std::vector<std::pair<std::string, Tile>> parts = {{"", tiles[dev]}};
      // A fused segment's strips read their device's own rows inside it.
      if (ch.rows.empty()) {
        ASSIGN_OR_RETURN(parts, OverlapParts(nodes, group[dev], tiles[dev]));
      }
      for (auto& [suffix, tile] : parts) {
        const int t =
            NewTask(nodes.front()->name + "/spatial" + suffix + "@" +
                        std::to_string(group[dev]),
                    {group[dev]}, nodes.front()->name, Scheme::kSpatial);
        RETURN_IF_ERROR(Need(t, in, tile.in_region, nodes.front()->name));
        for (const Node& tn : tile.nodes) {
          RETURN_IF_ERROR(AddWholeWeights(t, tn));
          RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(tn));
        }
        d.holders.push_back(Holder{t, tile.out_region});
        if (!ch.owned.empty()) {
          const auto& [ob, oe] = ch.owned[dev];
          d.holders.back().owned = Region::Slice(ShapeOf(out), 2, ob, oe);
        }
      }
    }
    for (const Node* n : nodes) placed_.insert(n->name);
    dist_[out] = d;
    return Status::Ok();
  }

  StatusOr<Plan> Finish() {
    for (const auto& n : g_.nodes) {
      auto it = req_.layers.find(n.name);
      if (it != req_.layers.end()) {
        plan_.decisions.push_back(LayerDecision{
            n.name, SchemeName(it->second.scheme), it->second.reason});
      } else if (notes_.count(n.name)) {
        plan_.decisions.push_back(notes_.at(n.name));
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
                   d.kind == Dist::kPartials ? Region::Full(plan_.output_shape)
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

  // A strip whose rows no later layer reads (the last row of an odd-sized
  // map under a stride-2 layer, when strips are one row high) computes
  // nothing anyone needs: drop it and what it would have received.
  void RemoveUnreadTasks() {
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

  Scheme whole_scheme_ = Scheme::kWhole;
  const BuildRequest& req_;
  const Graph& g_;
  Plan plan_;
  std::vector<double> shares_;
  std::map<std::string, Dist> dist_;
  std::set<int> reducers_;  // the tasks of ScatterPartials
  std::set<std::string> placed_;
  std::map<std::vector<int>, int> open_;
  std::map<std::string, LayerDecision> notes_;  // followers and whole nodes
  // What each device received of a tensor, by (tensor, device).
  std::map<std::pair<std::string, int>, std::vector<Holder>> received_;
};

}  // namespace

bool IsSplittableLayer(const Graph& g, const Node& n) {
  return CheckSplittable(g, n).ok();
}

StatusOr<Plan> BuildPlan(const BuildRequest& req) {
  Builder b(req);
  return b.Build();
}

}  // namespace shoal
