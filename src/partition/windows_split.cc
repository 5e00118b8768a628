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

#include "graph/op_registry.h"
#include "partition/plan_builder.h"
#include "partition/strategy.h"
#include "partition/window_grids.h"

namespace shoal {

namespace {

// Splits `total` units over `shares` in proportion (largest remainder),
// at least one each.
std::vector<int64_t> Apportion(int64_t total,
                               const std::vector<double>& shares) {
  double sum = 0;
  for (double x : shares) sum += x;
  std::vector<int64_t> count(shares.size(), 1);
  for (int64_t left = total - static_cast<int64_t>(shares.size()); left > 0;
       --left) {
    size_t best = 0;
    double best_gap = -1e300;
    for (size_t k = 0; k < shares.size(); ++k) {
      const double gap = static_cast<double>(total) * shares[k] / sum -
                         static_cast<double>(count[k]);
      if (gap > best_gap) {
        best = k;
        best_gap = gap;
      }
    }
    ++count[best];
  }
  return count;
}

// The boxes of a grid: the input device, then the others fastest first,
// as many as there are windows. Up to one device per window row, bands of
// rows in proportion to the devices' shares; beyond, as many devices in
// each window row, each a run of its windows.
WindowGrid BoxesOf(const WindowShape& s, const std::vector<PlanDevice>& devices,
                   int hub) {
  WindowGrid g;
  g.height = s.height;
  g.width = s.width;
  g.window = s.window;
  const int64_t bands = s.bands();
  const int64_t across = s.width / s.window;
  std::vector<int> order(devices.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if ((a == hub) != (b == hub)) return a == hub;
    return devices[a].share > devices[b].share;
  });
  const int64_t n =
      std::min<int64_t>(static_cast<int64_t>(order.size()), bands * across);
  const int64_t per_band = std::max<int64_t>(1, n / bands);
  order.resize(static_cast<size_t>(per_band > 1 ? per_band * bands
                                                : std::min(n, bands)));
  std::sort(order.begin(), order.end());
  const int64_t w = s.window;
  if (per_band == 1) {
    std::vector<double> shares;
    for (int d : order) shares.push_back(devices[d].share);
    const auto count = Apportion(bands, shares);
    int64_t row = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      g.devices.push_back(order[k]);
      g.boxes.push_back(WindowBox{row * w, (row + count[k]) * w, 0, s.width});
      row += count[k];
    }
    return g;
  }
  for (int64_t b = 0; b < bands; ++b) {
    std::vector<double> shares;
    for (int64_t k = 0; k < per_band; ++k) {
      shares.push_back(devices[order[b * per_band + k]].share);
    }
    const auto count = Apportion(across, shares);
    int64_t col = 0;
    for (int64_t k = 0; k < per_band; ++k) {
      g.devices.push_back(order[b * per_band + k]);
      g.boxes.push_back(
          WindowBox{b * w, (b + 1) * w, col * w, (col + count[k]) * w});
      col += count[k];
    }
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
    r.windows.push_back(BoxesOf(s, opts.devices, r.hub));
  }
  // The patch embedding (a convolution of the model input, permuted into
  // the first grid's map) runs in the first grid's bands of rows, each
  // device reading its rows of the image: the input device sends those
  // rows of pixels, not the embedding's larger map.
  const WindowGrid& first = r.windows.front();
  if (first.boxes.front().col_end == first.width) {
    for (const auto& n : g.nodes) {
      if (n.inputs.empty() || n.inputs[0] != g.inputs[0] ||
          !SplitFactsOf(n.op).spatial_halo || n.outputs.size() != 1) {
        continue;
      }
      const Shape& y = g.FindTensor(n.outputs[0])->shape;
      if (y.size() != 4 || y[2] != first.height || y[3] != first.width) break;
      SpatialChain ch;
      ch.nodes = {n.name};
      ch.reason =
          "the patch embedding in the first stage's bands of rows, each "
          "device reading its rows of the image";
      ch.devices = first.devices;
      for (const auto& b : first.boxes) {
        ch.rows.emplace_back(b.row_begin, b.row_end);
      }
      ch.owned = ch.rows;
      r.spatial.push_back(ch);
      break;
    }
  }
  return BuildPlan(r);
}

}  // namespace

SHOAL_REGISTER_STRATEGY("windows", 14, PlanWindows);

}  // namespace shoal
