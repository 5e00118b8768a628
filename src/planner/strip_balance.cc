#include "planner/strip_balance.h"

#include <algorithm>
#include <map>

#include "partition/spatial_split.h"
#include "partition/split_counts.h"

namespace shoal {

namespace {

using ChainRows = std::map<std::string, std::vector<int64_t>>;

// A relative gain below this is the simulator's rounding, not a move.
constexpr double kGain = 1e-4;

// Every chain's rows from one share per device, each chain's strips cut
// by its own devices' shares; false when a strip would get no row.
bool RowsFromShares(const std::vector<StripRows>& chains,
                    const std::vector<double>& w, ChainRows* rows) {
  for (const StripRows& c : chains) {
    int64_t total = 0;
    for (int64_t r : c.rows) total += r;
    std::vector<double> s;
    double sum = 0;
    for (int d : c.devices) {
      s.push_back(w[d]);
      sum += w[d];
    }
    if (!(sum > 0)) return false;
    for (double& x : s) x /= sum;
    auto r = SplitCounts(total, s);
    if (!r.ok()) return false;
    for (int64_t k : *r) {
      if (k < 1) return false;
    }
    (*rows)[c.chain] = std::move(r).value();
  }
  return true;
}

// One descent from `opts`' strips: by shares first when `by_shares`, then
// by rows.
StripBalance Descend(const Graph& g, const std::vector<StripRows>& chains,
                     const PlanOptions& opts, double start,
                     const std::function<StatusOr<double>(const Plan&)>& value,
                     int max_evaluations, bool by_shares) {
  StripBalance b;
  b.options = opts;
  b.value = start;
  for (const StripRows& c : chains) b.options.spatial_rows[c.chain] = c.rows;
  // Plans the rows, keeps them if the plan is predicted sooner.
  auto tried = [&](const ChainRows& rows) {
    if (b.evaluations >= max_evaluations) return false;
    ++b.evaluations;
    PlanOptions o = b.options;
    for (const auto& [chain, r] : rows) o.spatial_rows[chain] = r;
    auto p = MakePlan(g, o);
    if (!p.ok()) return false;
    auto v = value(*p);
    if (!v.ok() || *v >= b.value * (1 - kGain)) return false;
    b.options = std::move(o);
    b.value = *v;
    ++b.moves;
    return true;
  };

  // Every chain at once: a share moved from one device to the next cuts
  // all the chains' strips anew. A model of many chains (ResNet-50's
  // seventeen) would spend the budget before one pass of single rows.
  // Steps from a quarter of an equal share, halved after a pass over every
  // pair of neighbours in which none paid.
  const int n = static_cast<int>(opts.devices.size());
  std::vector<double> w = NormalizedShares(opts.devices);
  for (double step = 0.25 / n; by_shares && n > 1 && step >= 0.02 / n &&
                               b.evaluations < max_evaluations;) {
    bool gained = false;
    for (int k = 0; k + 1 < n && !gained; ++k) {
      for (int dir : {-1, 1}) {
        std::vector<double> m = w;
        m[k] += dir * step;
        m[k + 1] -= dir * step;
        if (!(m[k] > 0 && m[k + 1] > 0)) continue;
        ChainRows rows;
        if (!RowsFromShares(chains, m, &rows)) continue;
        bool same = true;
        for (const auto& [chain, r] : rows)
          same &= b.options.spatial_rows[chain] == r;
        if (same) continue;  // too small a step to move a row
        if (tried(rows)) {
          w = m;
          gained = true;
          break;
        }
      }
    }
    if (!gained) step /= 2;
  }

  // A row at a time: first improvement, a move that pays taken at once and
  // the same boundary tried again (a strip may want several rows moved),
  // else the scan goes on to the next boundary, chain after chain, round
  // and round; it stops after a whole pass over every boundary in which no
  // move paid.
  int since_gain = 0, boundaries = 0;
  for (const StripRows& c : chains) boundaries += int(c.rows.size()) - 1;
  for (size_t ci = 0, k = 0; boundaries > 0 && since_gain < boundaries &&
                             b.evaluations < max_evaluations;) {
    if (k + 1 >= chains[ci].rows.size()) {
      ci = (ci + 1) % chains.size();
      k = 0;
      continue;
    }
    const std::string& chain = chains[ci].chain;
    bool gained = false;
    for (int dir : {-1, 1}) {
      // dir -1: strip k gives its last row to strip k + 1; +1: it takes
      // the first row of k + 1.
      std::vector<int64_t> moved = b.options.spatial_rows[chain];
      moved[k] += dir;
      moved[k + 1] -= dir;
      if (moved[k] < 1 || moved[k + 1] < 1) continue;
      if (tried({{chain, moved}})) {
        gained = true;
        break;
      }
    }
    if (gained) {
      since_gain = 0;
    } else {
      ++since_gain;
      ++k;
    }
  }
  if (b.moves == 0) b.options.spatial_rows = opts.spatial_rows;
  return b;
}

// The layout `shares` cut a chain's output into, as a list of its tiles'
// bounds; empty when some tile would get no row or column.
std::vector<int64_t> TileBoundsOf(const TileCut& c,
                                  const std::vector<double>& shares) {
  auto l = TileLayout(c.rows, c.cols, shares, c.tiles_per_band);
  if (!l.ok()) return {};
  std::vector<int64_t> out;
  for (const TileBounds& b : *l) {
    if (b.row_end <= b.row_begin || b.col_end <= b.col_begin) return {};
    out.insert(out.end(), {b.row_begin, b.row_end, b.col_begin, b.col_end});
  }
  return out;
}

// The descent for chains of 2-D tiles: a share moved from one device of a
// chain to another, any two (a band's middle tile recomputes halo on four
// sides, a corner one on two, and the tiles whose input leaves the input
// device last start last), kept when the plan is predicted sooner; a move
// that leaves every tile where it was is not tried. Steps from half an
// equal share (a tile of AlexNet's 6x6 last map moves a whole row or
// column at a time), halved after a pass in which none paid.
StripBalance DescendTiles(
    const Graph& g, std::vector<TileCut> cuts, const PlanOptions& opts,
    double start, const std::function<StatusOr<double>(const Plan&)>& value,
    int max_evaluations) {
  StripBalance b;
  b.options = opts;
  b.value = start;
  // A move of `step` from device i to device j of chain `c`, tried.
  auto tried = [&](TileCut& c, int i, int j, double step) {
    std::vector<double> m = c.shares;
    m[i] -= step;
    m[j] += step;
    if (!(m[i] > 0)) return false;
    const std::vector<int64_t> moved = TileBoundsOf(c, m);
    if (moved.empty() || moved == TileBoundsOf(c, c.shares)) return false;
    ++b.evaluations;
    PlanOptions o = b.options;
    o.spatial_shares[c.chain] = m;
    auto p = MakePlan(g, o);
    if (!p.ok()) return false;
    auto v = value(*p);
    if (!v.ok() || *v >= b.value * (1 - kGain)) return false;
    b.options = std::move(o);
    b.value = *v;
    ++b.moves;
    c.shares = m;
    return true;
  };
  // Every chain at each step, the last (most often the largest) first,
  // so that no chain spends the budget before the others had a pass.
  size_t most = 0;
  for (const TileCut& c : cuts) most = std::max(most, c.shares.size());
  for (double step = 0.5 / std::max<size_t>(most, 1);
       most > 1 && step >= 0.02 / most && b.evaluations < max_evaluations;) {
    bool gained = false;
    for (size_t k = cuts.size(); k-- > 0;) {
      TileCut& c = cuts[k];
      const int n = static_cast<int>(c.shares.size());
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n && b.evaluations < max_evaluations; ++j) {
          if (i != j && tried(c, i, j, step)) gained = true;
        }
      }
    }
    if (!gained) step /= 2;
  }
  if (b.moves == 0) b.options.spatial_shares = opts.spatial_shares;
  return b;
}

}  // namespace

StatusOr<StripBalance> BalanceStrips(
    const Graph& g, const PlanOptions& opts, double start,
    const std::function<StatusOr<double>(const Plan&)>& value,
    int max_evaluations) {
  ASSIGN_OR_RETURN(std::vector<StripRows> chains, SpatialStripRows(g, opts));
  if (chains.empty()) {
    ASSIGN_OR_RETURN(std::vector<TileCut> cuts, SpatialTileCuts(g, opts));
    return DescendTiles(g, std::move(cuts), opts, start, value,
                        max_evaluations);
  }
  // Each descent ends where no single move pays, and they end in different
  // places: by rows alone, AlexNet on eight Pi 3B+ predicts 128.7 ms where
  // by shares first it stops at 130.7; ResNet-50 on four Pi 4B, 112.1
  // against 109.5. Both, each with half the budget, the better kept.
  StripBalance rows =
      Descend(g, chains, opts, start, value, max_evaluations / 2, false);
  StripBalance shares = Descend(g, chains, opts, start, value,
                                max_evaluations - rows.evaluations, true);
  StripBalance& best = shares.value < rows.value ? shares : rows;
  best.evaluations = rows.evaluations + shares.evaluations;
  return best;
}

}  // namespace shoal
