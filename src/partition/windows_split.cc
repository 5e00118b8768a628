// windows: a window-attention model (Swin) split by its windows. Within a
// window nothing reads across its edge — attention mixes its tokens, and
// the MLPs, norms and residual sums act on each token alone — so each
// device owns bands of whole window rows of every stage's map and computes
// them alone, holding every weight. Only a shift of the windows (the
// shifted blocks roll the map by half a window) and a patch merging across
// two bands move rows between neighbours: a few rows each, where splitting
// by heads reduces the whole activation twice per block. A stage with
// fewer window rows than devices runs on as many as it has, the input
// device first.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "partition/plan_builder.h"
#include "partition/strategy.h"
#include "partition/window_grids.h"

namespace shoal {

namespace {

// The devices of a grid of `bands` window rows: the input device, then the
// others fastest first, as many as there are bands; each gets a run of
// bands in proportion to its share (largest remainder, at least one).
WindowGrid BandsOf(const WindowShape& s, const std::vector<PlanDevice>& devices,
                   int hub) {
  WindowGrid g;
  g.height = s.height;
  g.width = s.width;
  g.window = s.window;
  const int64_t bands = s.bands();
  std::vector<int> order(devices.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if ((a == hub) != (b == hub)) return a == hub;
    return devices[a].share > devices[b].share;
  });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(bands)));
  std::sort(order.begin(), order.end());
  double total = 0;
  for (int d : order) total += devices[d].share;
  std::vector<int64_t> count(order.size(), 1);
  int64_t left = bands - static_cast<int64_t>(order.size());
  std::vector<double> want(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    want[k] = static_cast<double>(bands) * devices[order[k]].share / total - 1;
  }
  while (left > 0) {
    size_t best = 0;
    for (size_t k = 1; k < order.size(); ++k) {
      if (want[k] - static_cast<double>(count[k] - 1) >
          want[best] - static_cast<double>(count[best] - 1)) {
        best = k;
      }
    }
    ++count[best];
    --left;
  }
  int64_t row = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    g.devices.push_back(order[k]);
    g.rows.emplace_back(row * s.window, (row + count[k]) * s.window);
    row += count[k];
  }
  return g;
}

StatusOr<Plan> PlanWindows(const Graph& g, const PlanOptions& opts) {
  const auto grids = FindWindowGrids(g);
  if (grids.empty()) {
    return InvalidArgument("strategy windows does not apply to model " +
                           g.name +
                           ": it has no window attention (a map [1, H, W, C] "
                           "reshaped into windows of w x w tokens)");
  }
  BuildRequest r = BaseRequest(g, opts);
  for (const auto& s : grids) {
    r.windows.push_back(BandsOf(s, opts.devices, r.hub));
  }
  return BuildPlan(r);
}

}  // namespace

SHOAL_REGISTER_STRATEGY("windows", 14, PlanWindows);

}  // namespace shoal
