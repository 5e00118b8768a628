#include "planner/placement.h"

#include <algorithm>
#include <cmath>

#include "cluster/swap.h"
#include "graph/op_registry.h"
#include "graph/sparsity.h"
#include "partition/spatial_split.h"
#include "partition/split_counts.h"
#include "plan/deal.h"
#include "plan/plan_cost.h"
#include "util/units.h"

namespace shoal {

const char* FormName(Form f) {
  switch (f) {
    case Form::kWhole:
      return "whole";
    case Form::kReplicate:
      return "replicate";
    case Form::kLop:
      return "lop";
    case Form::kLip:
      return "lip";
    case Form::kFuse1:
      return "fuse1";
    case Form::kFuse2:
      return "fuse2";
    case Form::kSpatial:
      return "spatial";
  }
  return "?";
}

std::string GroupName(const std::vector<PlanDevice>& devs,
                      const std::vector<int>& group) {
  std::string s = "{";
  for (size_t i = 0; i < group.size(); ++i) {
    if (i == 4 && group.size() > 6) {
      s += ",... " + std::to_string(group.size()) + " devices";
      break;
    }
    s += (i ? "," : "") + devs[group[i]].name;
  }
  return s + "}";
}

namespace {

// A part of a tensor on a device: along all of it, its channels or its
// rows, the fraction [b, e); `prob` < 1 for one of several replicas.
enum class Axis { kAll, kChannel, kRow };
struct Piece {
  int dev;
  Axis axis;
  double b, e;
  double prob;
};

std::vector<double> Fractions(int64_t units, const std::vector<double>& shares,
                              bool* ok) {
  std::vector<double> f;
  if (units <= 0) {
    f = shares;
    return f;
  }
  auto c = SplitCounts(units, shares);
  if (!c.ok()) {
    *ok = false;
    return f;
  }
  for (int64_t v : c.value()) f.push_back(double(v) / double(units));
  return f;
}

std::vector<Piece> Pieces(const std::vector<int>& devs,
                          const std::vector<double>& frac, Axis axis) {
  std::vector<Piece> out;
  double b = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    out.push_back(Piece{devs[i], axis, b, b + frac[i], 1.0});
    b += frac[i];
  }
  return out;
}

double Overlap(const Piece& h, const Piece& r) {
  if (h.axis == Axis::kAll) return r.e - r.b;
  if (r.axis == Axis::kAll) return h.e - h.b;
  if (h.axis == r.axis)
    return std::max(0.0, std::min(h.e, r.e) - std::max(h.b, r.b));
  return (h.e - h.b) * (r.e - r.b);
}

NodeCost Scaled(NodeCost c, double macs, double weights, double in,
                double out) {
  c.macs = std::llround(double(c.macs) * macs);
  c.weight_elements = std::llround(double(c.weight_elements) * weights);
  c.input_elements = std::llround(double(c.input_elements) * in);
  c.output_elements = std::llround(double(c.output_elements) * out);
  return c;
}

}  // namespace

UnitPricer::UnitPricer(const Graph& g, const std::vector<PlanUnit>& units,
                       const LatencyModel& m, int hub)
    : g_(g),
      units_(units),
      m_(m),
      hub_(hub),
      reserved_(m.cluster().devices.size(), 0) {}

void UnitPricer::SetWire(const WireSettings& wire, bool input_pixels) {
  wire_ = wire;
  input_pixels_ = input_pixels;
}

int64_t UnitPricer::OutputWireBytes(const PlanUnit& u, int64_t bytes) const {
  double b = static_cast<double>(bytes) *
             static_cast<double>(WireDtypeBytes(wire_.dtype)) /
             kBytesPerElement;
  if (wire_.lz4 && IsSparseTensor(g_, u.output)) {
    b *= IsPooledSparseTensor(g_, u.output) ? kPooledWireFraction
                                            : kSparseWireFraction;
  }
  return static_cast<int64_t>(b);
}

int64_t UnitPricer::Capacity(int d) const {
  const DeviceSpec& dev = m_.cluster().devices[d];
  const int64_t mem = dev.memory_bytes;
  if (mem <= 0) return 0;
  // A board that swaps (cluster/swap.h): the weights its framework holds
  // without paging; the simulator prices what goes beyond.
  if (const FrameworkMemory* fm = FrameworkMemoryOf(dev.board)) {
    return std::max<int64_t>(1, WeightBudget(*fm, mem) - reserved_[d]);
  }
  return std::max<int64_t>(1, WeightCapacity(mem - reserved_[d]));
}

void UnitPricer::Reserve(int d, int64_t bytes) {
  reserved_[d] = std::max(reserved_[d], bytes);
}

int64_t UnitPricer::Reserved(int d) const { return reserved_[d]; }

std::vector<double> UnitPricer::Shares(const std::vector<int>& devices) const {
  double sum = 0;
  for (int d : devices) sum += m_.MacsPerSecond(d);
  std::vector<double> s;
  for (int d : devices) s.push_back(m_.MacsPerSecond(d) / sum);
  return s;
}

std::vector<double> UnitPricer::ReplicaShares(
    const std::vector<int>& devices) const {
  const std::vector<int> deal = DealInProportion(devices, Shares(devices));
  std::vector<double> f;
  for (int d : devices) {
    f.push_back(double(std::count(deal.begin(), deal.end(), d)) /
                double(deal.size()));
  }
  return f;
}

namespace {

bool Refuse(Load* l, const std::string& why) {
  l->ok = false;
  l->why = why;
  return false;
}

}  // namespace

double UnitPricer::SecondsWhole(const PlanUnit& u, int d) const {
  double s = 0;
  for (const auto& c : u.costs) s += Seconds(d, c);
  return s;
}

bool UnitPricer::PriceWhole(const PlanUnit& u, const Placement& p,
                            Load* l) const {
  const int d = p.devices[0];
  l->seconds = SecondsWhole(u, d);
  l->busy[d] = l->seconds;
  l->weights[d] = u.weight_bytes;
  return true;
}

bool UnitPricer::PriceReplicas(const PlanUnit& u, const Placement& p,
                               Load* l) const {
  const auto f = ReplicaShares(p.devices);
  for (size_t i = 0; i < p.devices.size(); ++i) {
    const int d = p.devices[i];
    const double s = SecondsWhole(u, d) * f[i];
    l->seconds += s;
    l->busy[d] += s;
    l->weights[d] += u.weight_bytes;
  }
  return true;
}

bool UnitPricer::PriceOutputSplit(const PlanUnit& u, const Placement& p,
                                  Load* l) const {
  if (!u.splittable) return Refuse(l, u.nodes[0] + " cannot be split");
  bool ok = true;
  const auto f = Fractions(u.out_units, Shares(p.devices), &ok);
  if (!ok) return Refuse(l, u.nodes[0] + "'s outputs are fewer than devices");
  for (size_t i = 0; i < p.devices.size(); ++i) {
    const int d = p.devices[i];
    double s = Seconds(d, Scaled(u.costs[0], f[i], f[i], 1, f[i]));
    for (size_t n = 1; n < u.costs.size(); ++n)
      s += Seconds(d, Scaled(u.costs[n], f[i], f[i], f[i], f[i]));
    l->busy[d] += s;
    l->weights[d] += std::llround(u.weight_bytes * f[i]);
    l->seconds = std::max(l->seconds, s);
  }
  return true;
}

bool UnitPricer::PriceInputSplit(const PlanUnit& u, const Placement& p,
                                 Load* l) const {
  if (!u.splittable) return Refuse(l, u.nodes[0] + " cannot be split");
  bool ok = true;
  const auto f = Fractions(u.in_units, Shares(p.devices), &ok);
  if (!ok) return Refuse(l, u.nodes[0] + "'s inputs are fewer than devices");
  double slowest = 0;
  for (size_t i = 0; i < p.devices.size(); ++i) {
    const int d = p.devices[i];
    double s = Seconds(d, Scaled(u.costs[0], f[i], f[i], f[i], 1));
    l->busy[d] += s;
    // Partial sums (dense) go to the hub, which adds them up.
    const double send = m_.TransferSeconds(
        d, hub_,
        u.head_output_bytes * WireDtypeBytes(wire_.dtype) / kBytesPerElement);
    l->busy[d] += send;
    l->weights[d] += std::llround(u.weight_bytes * f[i]);
    slowest = std::max(slowest, s + send);
  }
  double rest = 0;
  for (size_t n = 1; n < u.costs.size(); ++n) rest += Seconds(hub_, u.costs[n]);
  l->busy[hub_] += rest;
  l->seconds = slowest + rest;
  return true;
}

bool UnitPricer::PriceRows(const PlanUnit& u, const Placement& p,
                           Load* l) const {
  if (!u.tileable) return Refuse(l, u.nodes[0] + " cannot run on rows");
  std::vector<const Node*> nodes;
  for (const auto& n : u.nodes) nodes.push_back(g_.FindNode(n));
  const auto shares = Shares(p.devices);
  // Strips, or 2-D tiles with --tiles 2d: the layout the plan builder will
  // use (ToRequest chooses it the same way).
  const int per_band = ChooseTilesPerBand(g_, nodes, shares, tiles_);
  if (per_band == 0) {
    return Refuse(l, u.nodes[0] + "'s output cannot be split into " +
                         (tiles_ == TileShape::k2D ? "2-D tiles" : "strips") +
                         " over " + std::to_string(p.devices.size()) +
                         " devices");
  }
  auto h = ChainReadFactor(g_, nodes, shares, per_band);
  if (!h.ok()) return Refuse(l, h.status().message());
  for (size_t i = 0; i < p.devices.size(); ++i) {
    const int d = p.devices[i];
    const double f = shares[i] * h.value();
    double s = 0;
    for (const auto& c : u.costs)
      s += Seconds(d, Scaled(c, f, 1, f, shares[i]));
    l->busy[d] += s;
    l->weights[d] += u.weight_bytes;
    l->seconds = std::max(l->seconds, s);
  }
  return true;
}

Load UnitPricer::Price(int ui, const Placement& p) const {
  const PlanUnit& u = units_[ui];
  Load l;
  if (p.devices.empty()) {
    Refuse(&l, "no devices");
    return l;
  }
  bool priced = false;
  switch (p.form) {
    case Form::kWhole:
      priced = PriceWhole(u, p, &l);
      break;
    case Form::kReplicate:
      priced = PriceReplicas(u, p, &l);
      break;
    case Form::kLop:
    case Form::kFuse1:
      priced = PriceOutputSplit(u, p, &l);
      break;
    case Form::kLip:
    case Form::kFuse2:
      priced = PriceInputSplit(u, p, &l);
      break;
    case Form::kSpatial:
      priced = PriceRows(u, p, &l);
      break;
  }
  if (!priced) return l;
  const auto& devs = m_.cluster().devices;
  for (const auto& [d, w] : l.weights) {
    if (const FrameworkMemory* fm = FrameworkMemoryOf(devs[d].board)) {
      // The paper's rule on a board that swaps: its Procedure 1 splits a
      // layer that alone would page.
      if (LayerMustSplit(*fm, devs[d].memory_bytes, w)) {
        Refuse(&l, u.nodes[0] + " needs " + MiB(w) + " of weights on " +
                       devs[d].name + ", whose framework can hold " +
                       MiB(WeightBudget(*fm, devs[d].memory_bytes)) +
                       " of one layer without swapping");
        return l;
      }
      continue;
    }
    // The plan's own check (CheckPlanMemory) also counts the largest weight
    // once more while it is reordered: a unit alone needs up to 2x its
    // weights, so a 640 MiB fc is not placed whole on a 1 GiB device.
    if (!FitsWhole(w, devs[d].memory_bytes)) {
      Refuse(&l, u.nodes[0] + " needs " + MiB(w) + " of weights on " +
                     devs[d].name + ", which can hold " +
                     MiB(devs[d].memory_bytes / 2) +
                     " (once, and once more while reordered)");
      return l;
    }
  }
  return l;
}

bool UnitPricer::Compatible(const Placement& prev, const Placement& p) const {
  if (prev.form == Form::kFuse1) {
    return p.form == Form::kFuse2 && p.devices == prev.devices;
  }
  if (p.form == Form::kFuse2) return false;
  return true;
}

namespace {

// Where a placement leaves its unit's output.
std::vector<Piece> Layout(const UnitPricer& pr, const PlanUnit& u,
                          const Placement& p) {
  const int k = static_cast<int>(p.devices.size());
  switch (p.form) {
    case Form::kWhole:
      return {Piece{p.devices[0], Axis::kAll, 0, 1, 1}};
    case Form::kReplicate: {
      std::vector<Piece> out;
      const auto f = pr.ReplicaShares(p.devices);
      for (int i = 0; i < k; ++i)
        out.push_back(Piece{p.devices[i], Axis::kAll, 0, 1, f[i]});
      return out;
    }
    case Form::kLop:
    case Form::kFuse1: {
      bool ok = true;
      auto f = Fractions(u.out_units, pr.Shares(p.devices), &ok);
      if (!ok) f = pr.Shares(p.devices);
      return Pieces(p.devices, f, Axis::kChannel);
    }
    case Form::kLip:
    case Form::kFuse2:
      return {Piece{pr.hub(), Axis::kAll, 0, 1, 1}};
    case Form::kSpatial:
      return Pieces(p.devices, pr.Shares(p.devices), Axis::kRow);
  }
  return {};
}

// What a placement needs of its unit's input.
std::vector<Piece> Need(const UnitPricer& pr, const PlanUnit& u,
                        const Placement& p) {
  const int k = static_cast<int>(p.devices.size());
  std::vector<Piece> out;
  switch (p.form) {
    case Form::kWhole:
      return {Piece{p.devices[0], Axis::kAll, 0, 1, 1}};
    case Form::kReplicate: {
      const auto f = pr.ReplicaShares(p.devices);
      for (int i = 0; i < k; ++i)
        out.push_back(Piece{p.devices[i], Axis::kAll, 0, 1, f[i]});
      return out;
    }
    case Form::kLop:
    case Form::kFuse1:
      for (int d : p.devices) out.push_back(Piece{d, Axis::kAll, 0, 1, 1.0});
      return out;
    case Form::kLip:
    case Form::kFuse2: {
      bool ok = true;
      auto f = Fractions(u.in_units, pr.Shares(p.devices), &ok);
      if (!ok) f = pr.Shares(p.devices);
      return Pieces(p.devices, f, Axis::kChannel);
    }
    case Form::kSpatial: {
      // Each strip reads its rows and a halo; spread the unit's read factor
      // evenly over the strips.
      const auto shares = pr.Shares(p.devices);
      out = Pieces(p.devices, shares, Axis::kRow);
      for (auto& piece : out) {
        const double w = piece.e - piece.b;
        piece.b = std::max(0.0, piece.b - 0.1 * w);
        piece.e = std::min(1.0, piece.e + 0.1 * w);
      }
      return out;
    }
  }
  return out;
}

void AddSends(const UnitPricer& pr, const std::vector<Piece>& have,
              const std::vector<Piece>& need, int64_t bytes, bool paired,
              Load* l) {
  // A device's messages leave together (a worker sends from several
  // threads): their bytes queue on its link, their latencies overlap, so a
  // source pays the bytes of all and the latency of one.
  // weight_of: the largest share of requests any of a source's sends is
  // made for (replicas send for a share of them), which weighs its latency.
  std::map<int, double> bytes_from, weight_of;
  for (const auto& r : need) {
    for (const auto& h : have) {
      if (h.dev == r.dev) continue;
      if (paired && h.prob < 1) continue;  // same replicas, same request
      const double part = Overlap(h, r);
      if (part <= 0) continue;
      const double p = h.prob * r.prob;
      bytes_from[h.dev] += p * part * double(bytes);
      weight_of[h.dev] = std::max(weight_of[h.dev], p);
    }
  }
  for (const auto& [src, b] : bytes_from) {
    // dst -1: any other device; a link is priced by its source's.
    const double latency = pr.model().TransferSeconds(src, -1, 0);
    const double all = pr.model().TransferSeconds(src, -1, std::llround(b));
    l->busy[src] += weight_of[src] * latency + (all - latency);
  }
}

void SecondsFromBusy(Load* l) {
  for (const auto& [d, s] : l->busy) l->seconds = std::max(l->seconds, s);
}

}  // namespace

Load UnitPricer::Transition(int ui, const Placement* prev,
                            const Placement& p) const {
  const PlanUnit& u = units_[ui];
  Load l;
  const bool same_rows = prev != nullptr && prev->form == Form::kSpatial &&
                         p.form == Form::kSpatial && prev->devices == p.devices;
  const bool fused = prev != nullptr && prev->form == Form::kFuse1 &&
                     p.form == Form::kFuse2 && prev->devices == p.devices;
  const std::vector<Piece> need = Need(*this, u, p);
  const std::vector<Piece> hub = {Piece{hub_, Axis::kAll, 0, 1, 1}};
  if (u.reads_previous && prev != nullptr) {
    if (!same_rows && !fused) {
      const bool paired = prev->form == Form::kReplicate &&
                          p.form == Form::kReplicate &&
                          prev->devices == p.devices;
      AddSends(*this, Layout(*this, units_[ui - 1], *prev), need,
               OutputWireBytes(units_[ui - 1], units_[ui - 1].output_bytes),
               paired, &l);
    }
  } else {
    // The model input, or inputs from further back: priced as if they came
    // from the hub (the MILP sees consecutive units only).
    for (const auto& in : u.inputs) {
      const bool pixels = input_pixels_ && in == g_.inputs[0];
      const int64_t per =
          pixels ? 1 : WireDtypeBytes(wire_.dtype);  // an image: a byte
      AddSends(*this, hub, need, NumElements(g_.tensors.at(in).shape) * per,
               false, &l);
    }
  }
  SecondsFromBusy(&l);
  return l;
}

Load UnitPricer::Finish(const Placement& last) const {
  Load l;
  if (last.form == Form::kWhole) return l;
  const PlanUnit& u = units_.back();
  AddSends(*this, Layout(*this, u, last), {Piece{hub_, Axis::kAll, 0, 1, 1}},
           OutputWireBytes(u, u.output_bytes), false, &l);
  SecondsFromBusy(&l);
  return l;
}

Estimate EstimateAssignment(const UnitPricer& pr, const Assignment& a) {
  Estimate e;
  std::map<int, double> busy;
  std::map<int, int64_t> weights;
  auto add = [&](const Load& l) {
    if (!l.ok && e.ok) {
      e.ok = false;
      e.why = l.why;
    }
    e.latency_s += l.seconds;
    for (const auto& [d, s] : l.busy) busy[d] += s;
    for (const auto& [d, w] : l.weights) weights[d] += w;
  };
  for (size_t u = 0; u < a.size(); ++u) {
    const Placement* prev = u > 0 ? &a[u - 1] : nullptr;
    if (prev != nullptr && !pr.Compatible(*prev, a[u])) {
      e.ok = false;
      e.why = "unit " + std::to_string(u) + " cannot follow its predecessor";
    }
    add(pr.Transition(static_cast<int>(u), prev, a[u]));
    add(pr.Price(static_cast<int>(u), a[u]));
  }
  if (!a.empty()) add(pr.Finish(a.back()));
  for (const auto& [d, s] : busy) e.period_s = std::max(e.period_s, s);
  const auto& devs = pr.model().cluster().devices;
  for (const auto& [d, w] : weights) {
    const int64_t cap = pr.Capacity(d);
    if (cap > 0 && w > cap && e.ok) {
      e.ok = false;
      e.why = "device " + devs[d].name + " would hold " + MiB(w) +
              " of weights but can hold " + MiB(cap) +
              " (half its memory: cache and engine" +
              (pr.Reserved(d) > 0 ? ", after reorder room" : "") + ")";
    }
  }
  return e;
}

StatusOr<BuildRequest> ToRequest(const Graph& g, const PlanOptions& opts,
                                 const std::vector<PlanUnit>& units,
                                 const Assignment& a,
                                 const std::vector<std::string>& reasons) {
  if (a.size() != units.size()) {
    return Internal("assignment has " + std::to_string(a.size()) +
                    " placements for " + std::to_string(units.size()) +
                    " units");
  }
  BuildRequest r = BaseRequest(g, opts);
  bool off_hub = false;
  for (size_t u = 0; u < units.size(); ++u) {
    const PlanUnit& unit = units[u];
    const Placement& p = a[u];
    const Node* head = g.FindNode(unit.nodes[0]);
    const bool conv = WeightLayoutOf(*head).feature_map;
    switch (p.form) {
      case Form::kWhole:
      case Form::kReplicate:
        for (const auto& n : unit.nodes) r.placement[n] = p.devices;
        off_hub |= p.devices != std::vector<int>{opts.hub};
        break;
      case Form::kLop:
      case Form::kFuse1:
      case Form::kLip:
      case Form::kFuse2: {
        Scheme s = Scheme::kFuse1;
        if (p.form == Form::kLop) s = conv ? Scheme::kChannel : Scheme::kLop;
        if (p.form == Form::kLip) s = conv ? Scheme::kFilter : Scheme::kLip;
        if (p.form == Form::kFuse2) s = Scheme::kFuse2;
        r.layers[unit.nodes[0]] = LayerChoice{s, reasons[u], p.devices};
        // Followers that cannot ride along with the split run on the hub.
        for (size_t n = 1; n < unit.nodes.size(); ++n)
          r.placement[unit.nodes[n]] = {opts.hub};
        break;
      }
      case Form::kSpatial: {
        // Consecutive units on the same strips form one chain while the
        // halos stay cheap (the spatial strategy's rule), and while nothing
        // else reads the chain's output so far (a residual block's input:
        // a chain keeps only its last output).
        std::vector<double> shares;
        double sum = 0;
        for (int d : p.devices) sum += opts.devices[d].share;
        for (int d : p.devices) shares.push_back(opts.devices[d].share / sum);
        const bool extend =
            !r.spatial.empty() && u > 0 && a[u - 1] == p &&
            unit.reads_previous &&
            r.spatial.back().nodes.back() == units[u - 1].nodes.back() &&
            g.ConsumerIndices(units[u - 1].output).size() == 1;
        if (extend) {
          std::vector<const Node*> chain;
          for (const auto& n : r.spatial.back().nodes)
            chain.push_back(g.FindNode(n));
          for (const auto& n : unit.nodes) chain.push_back(g.FindNode(n));
          auto f = ChainReadFactor(g, chain, shares,
                                   r.spatial.back().tiles_per_band);
          if (f.ok() && f.value() <= opts.max_read_factor) {
            for (const auto& n : unit.nodes)
              r.spatial.back().nodes.push_back(n);
            break;
          }
        }
        SpatialChain ch;
        ch.nodes = unit.nodes;
        ch.reason = reasons[u];
        ch.devices = p.devices;
        std::vector<const Node*> nodes;
        for (const auto& n : unit.nodes) nodes.push_back(g.FindNode(n));
        ch.tiles_per_band =
            std::max(1, ChooseTilesPerBand(g, nodes, shares, opts.tiles));
        r.spatial.push_back(ch);
        break;
      }
    }
  }
  if (off_hub) r.whole_scheme = Scheme::kPipeline;
  if (!a.empty() && a.back().form == Form::kWhole)
    r.output_device = a.back().devices[0];
  return r;
}

}  // namespace shoal
