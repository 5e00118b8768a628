// heads: a transformer split the way Megatron-LM splits it over GPUs, for
// boards: each device owns a set of attention heads — its columns of the
// Q, K and V projections (lop, aligned to whole heads), its heads'
// attention where those columns are, its rows of the output projection
// (lip, the partial sums reduce-scattered) — and each MLP is split by
// columns then rows (lop then lip), one reduction per MLP. What lies
// between blocks (LayerNorm, the residual sums) runs as the other
// strategies run it: whole on the input device, or on the reduced slices.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "partition/plan_builder.h"
#include "partition/strategy.h"
#include "partition/transformer_blocks.h"

namespace shoal {

namespace {

// The devices attention runs on: all of them, or the `heads` with the
// largest shares when there are fewer heads than devices (in device
// order).
std::vector<int> HeadDevices(const std::vector<PlanDevice>& devices,
                             int64_t heads) {
  const int n = static_cast<int>(devices.size());
  if (heads >= n) return {};
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return devices[a].share > devices[b].share;
  });
  order.resize(heads);
  std::sort(order.begin(), order.end());
  return order;
}

StatusOr<Plan> PlanHeads(const Graph& g, const PlanOptions& opts) {
  const auto attention = FindAttentionBlocks(g);
  if (attention.empty()) {
    return InvalidArgument("strategy heads does not apply to model " + g.name +
                           ": it has no attention block (Q, K and V "
                           "projections, per-head products, an output "
                           "projection)");
  }
  BuildRequest r = BaseRequest(g, opts);
  r.along_heads = true;
  std::vector<std::string> taken;
  for (const auto& a : attention) {
    const std::vector<int> devs = HeadDevices(opts.devices, a.heads);
    const std::string heads = std::to_string(a.heads) + " heads of " +
                              std::to_string(a.head_width) + " columns";
    for (const auto& p : {a.q, a.k, a.v}) {
      if (r.layers.count(p)) continue;  // packs more than one of them
      const int64_t segments = a.SegmentsOf(p);
      LayerChoice c{
          Scheme::kLop,
          "attention projection: each device computes the columns "
          "of its heads (" +
              heads + ")" +
              (segments > 1 ? ", in each of the " + std::to_string(segments) +
                                  " it packs of Q, K and V"
                            : ""),
          devs};
      c.unit = a.head_width;
      c.segments = segments;
      // With overlapped reductions, on the device's own tokens first
      // while the all-gather brings the rest, then put together for the
      // heads' products.
      c.rows_as_held = true;
      c.rows_merged = true;
      r.layers[p] = c;
      taken.push_back(p);
    }
    r.layers[a.out] = LayerChoice{
        Scheme::kLip,
        "attention output projection: each device multiplies its heads' "
        "rows of the weight, partial sums reduce-scattered",
        devs};
    taken.push_back(a.out);
  }
  for (const auto& m : FindMlpBlocks(g, taken)) {
    r.layers[m.up] =
        LayerChoice{Scheme::kLop,
                    "MLP: each device computes its columns of the first "
                    "layer and their activation"};
    // With overlapped reductions, also on each device's tokens as they
    // arrive from the all-gather, its own first.
    r.layers[m.up].rows_as_held = true;
    r.layers[m.down] =
        LayerChoice{Scheme::kLip,
                    "MLP: each device multiplies its columns by its rows "
                    "of the second layer, partial sums reduce-scattered"};
  }
  return BuildPlan(r);
}

}  // namespace

SHOAL_REGISTER_STRATEGY("heads", 13, PlanHeads);

}  // namespace shoal
