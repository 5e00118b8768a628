#include "partition/spatial_split.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "ops/window.h"
#include "partition/split_counts.h"

namespace shoal {

namespace {

bool IsWindowOp(const std::string& op) { return SplitFactsOf(op).spatial_halo; }

const Shape& ShapeOf(const Graph& g, const std::string& t) {
  return g.tensors.at(t).shape;
}

StatusOr<WindowGeometry> Geometry(const Graph& g, const Node& n) {
  const Shape& in = ShapeOf(g, n.inputs[0]);
  std::vector<int64_t> spatial(in.begin() + 2, in.end());
  std::vector<int64_t> kernel;
  if (WeightLayoutOf(n).feature_map) {  // a convolution: W [M, C, kernel...]
    const Shape& w = ShapeOf(g, n.inputs[1]);
    kernel.assign(w.begin() + 2, w.end());
  }
  return ResolveWindow(n, spatial, kernel);
}

// Elements the tiles of `layout` over a rows x cols map read with a halo
// of one row and column on every inner side, over the map's size.
double UnitHaloFactor(int64_t rows, int64_t cols,
                      const std::vector<TileBounds>& layout) {
  double read = 0;
  for (const TileBounds& t : layout) {
    const int64_t cb = t.col_end < 0 ? 0 : t.col_begin;
    const int64_t ce = t.col_end < 0 ? cols : t.col_end;
    read += double(std::min(rows, t.row_end + 1) -
                   std::max<int64_t>(0, t.row_begin - 1)) *
            double(std::min(cols, ce + 1) - std::max<int64_t>(0, cb - 1));
  }
  return read / (double(rows) * double(cols));
}

}  // namespace

StripInput InputRowsFor(const Window1D& w, int64_t out_begin, int64_t out_end) {
  const int64_t lo = out_begin * w.stride - w.pad_begin;
  const int64_t hi =
      (out_end - 1) * w.stride - w.pad_begin + (w.kernel - 1) * w.dilation + 1;
  StripInput s;
  s.begin = std::max<int64_t>(0, lo);
  s.end = std::min(w.in_size, hi);
  s.pad_begin = s.begin - lo;
  s.pad_end = hi - s.end;
  return s;
}

Status CheckTileable(const Graph& g, const Node& n) {
  const Shape& in = ShapeOf(g, n.inputs[0]);
  if (in.size() < 4) {
    return Unsupported("layer " + n.name + " has no spatial rows to split");
  }
  if (IsWindowOp(n.op)) {
    if (n.attrs.GetInt("ceil_mode", 0) != 0 &&
        n.attrs.GetInt("count_include_pad", 0) != 0) {
      return Unsupported("layer " + n.name +
                         " averages with ceil_mode and "
                         "count_include_pad, whose edge divisor a strip "
                         "cannot reproduce");
    }
    return Status::Ok();
  }
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s != nullptr && s->elementwise() && n.inputs.size() == 1)
    return Status::Ok();
  return Unsupported("layer " + n.name + " (" + n.op +
                     ") mixes rows, so it cannot run on a strip");
}

StatusOr<std::vector<TileBounds>> TileLayout(int64_t rows, int64_t cols,
                                             const std::vector<double>& shares,
                                             int tiles_per_band) {
  const int n = static_cast<int>(shares.size());
  if (n == 0) return InvalidArgument("no devices to tile over");
  if (tiles_per_band < 1 || tiles_per_band > n) {
    return InvalidArgument(std::to_string(tiles_per_band) +
                           " tiles per band for " + std::to_string(n) +
                           " devices");
  }
  std::vector<double> band_shares;
  for (int d = 0; d < n; d += tiles_per_band) {
    double s = 0;
    for (int k = d; k < std::min(n, d + tiles_per_band); ++k) s += shares[k];
    band_shares.push_back(s);
  }
  ASSIGN_OR_RETURN(auto band_rows, SplitCounts(rows, band_shares));
  std::vector<TileBounds> out;
  int64_t row = 0;
  for (size_t band = 0; band < band_rows.size(); ++band) {
    const int first = static_cast<int>(band) * tiles_per_band;
    const int last = std::min(n, first + tiles_per_band);
    TileBounds t;
    t.row_begin = row;
    t.row_end = row + band_rows[band];
    row = t.row_end;
    if (tiles_per_band == 1) {
      out.push_back(t);
      continue;
    }
    std::vector<double> in_band(shares.begin() + first, shares.begin() + last);
    for (double& s : in_band) s /= band_shares[band];
    ASSIGN_OR_RETURN(auto widths, SplitCounts(cols, in_band));
    int64_t col = 0;
    for (int64_t w : widths) {
      t.col_begin = col;
      t.col_end = col + w;
      col = t.col_end;
      out.push_back(t);
    }
  }
  return out;
}

StatusOr<std::vector<Tile>> TileChain(const Graph& g,
                                      const std::vector<const Node*>& nodes,
                                      const std::vector<double>& shares,
                                      int tiles_per_band) {
  if (nodes.empty()) return InvalidArgument("empty spatial chain");
  for (size_t i = 0; i < nodes.size(); ++i) {
    RETURN_IF_ERROR(CheckTileable(g, *nodes[i]));
    if (i > 0 && nodes[i]->inputs[0] != nodes[i - 1]->outputs[0]) {
      return InvalidArgument("spatial chain: " + nodes[i]->name +
                             " does not read " + nodes[i - 1]->name);
    }
  }
  const Shape& out_shape = ShapeOf(g, nodes.back()->outputs[0]);
  auto layout = TileLayout(out_shape[2], out_shape[3], shares, tiles_per_band);
  if (!layout.ok()) {
    return layout.status().WithContext(
        "layer " + nodes.back()->name + ": its " +
        std::to_string(out_shape[2]) + " x " + std::to_string(out_shape[3]) +
        " output cannot be split over " + std::to_string(shares.size()) +
        " devices" +
        (tiles_per_band == 1
             ? std::string(" in strips of rows")
             : " in bands of " + std::to_string(tiles_per_band) + " tiles"));
  }
  std::vector<Tile> tiles;
  for (const TileBounds& b : layout.value()) {
    ASSIGN_OR_RETURN(Tile t, TileBox(g, nodes, b));
    tiles.push_back(std::move(t));
  }
  return tiles;
}

StatusOr<Tile> TileRows(const Graph& g, const std::vector<const Node*>& nodes,
                        int64_t out_begin, int64_t out_end) {
  return TileBox(g, nodes, TileBounds{out_begin, out_end, 0, -1});
}

StatusOr<Tile> TileBox(const Graph& g, const std::vector<const Node*>& nodes,
                       const TileBounds& bounds) {
  const Shape& out_shape = ShapeOf(g, nodes.back()->outputs[0]);
  const bool all_cols = bounds.col_end < 0;
  const int64_t cb0 = all_cols ? 0 : bounds.col_begin;
  const int64_t ce0 = all_cols ? out_shape[3] : bounds.col_end;
  if (bounds.row_begin < 0 || bounds.row_end > out_shape[2] ||
      bounds.row_begin >= bounds.row_end || cb0 < 0 || ce0 > out_shape[3] ||
      cb0 >= ce0) {
    return InvalidArgument("layer " + nodes.back()->name + ": rows [" +
                           std::to_string(bounds.row_begin) + ", " +
                           std::to_string(bounds.row_end) + ") and columns [" +
                           std::to_string(cb0) + ", " + std::to_string(ce0) +
                           ") are not within its " +
                           std::to_string(out_shape[2]) + " x " +
                           std::to_string(out_shape[3]) + " output");
  }
  Tile t;
  int64_t b = bounds.row_begin, e = bounds.row_end, cb = cb0, ce = ce0;
  t.out_region = Region::Slice(out_shape, 2, b, e);
  t.out_region.begin[3] = cb;
  t.out_region.end[3] = ce;
  t.nodes.resize(nodes.size());
  t.rows.resize(nodes.size());
  t.cols.resize(nodes.size());
  // Walk back from the last layer: the box needed at each layer's input.
  for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
    Node n = *nodes[i];
    t.rows[i] = e - b;
    t.cols[i] = ce - cb;
    if (IsWindowOp(n.op)) {
      ASSIGN_OR_RETURN(WindowGeometry geo, Geometry(g, n));
      const size_t r = geo.kernel.size();
      const Shape& in = ShapeOf(g, n.inputs[0]);
      Window1D w{geo.kernel[0],    geo.stride[0],  geo.dilation[0],
                 geo.pad_begin[0], geo.pad_end[0], in[2]};
      StripInput s = InputRowsFor(w, b, e);
      std::vector<int64_t> pads(2 * r);
      for (size_t k = 0; k < r; ++k) {
        pads[k] = geo.pad_begin[k];
        pads[r + k] = geo.pad_end[k];
      }
      pads[0] = s.pad_begin;
      pads[r] = s.pad_end;
      // Explicit padding reproduces ceil mode's extra window exactly.
      const bool pool = !WeightLayoutOf(n).any();
      if (pool) n.attrs.Set("ceil_mode", int64_t{0});
      for (size_t k = 1; k < r; ++k) {
        if (k == 1 && !all_cols) {
          Window1D wc{geo.kernel[1],    geo.stride[1],  geo.dilation[1],
                      geo.pad_begin[1], geo.pad_end[1], in[3]};
          StripInput sc = InputRowsFor(wc, cb, ce);
          pads[1] = sc.pad_begin;
          pads[r + 1] = sc.pad_end;
          cb = sc.begin;
          ce = sc.end;
        } else if (pool && geo.ceil_mode) {
          // An axis kept whole: ceil mode's extra window as an explicit pad.
          const Shape& o = ShapeOf(g, n.outputs[0]);
          const int64_t span = (geo.kernel[k] - 1) * geo.dilation[k] + 1;
          const int64_t need = (o[2 + k] - 1) * geo.stride[k] + span -
                               in[2 + k] - geo.pad_begin[k];
          pads[r + k] = std::max<int64_t>(need, 0);
        }
      }
      n.attrs.Set("pads", pads);
      n.attrs.Set("auto_pad", std::string("NOTSET"));
      b = s.begin;
      e = s.end;
    }
    t.nodes[i] = std::move(n);
  }
  t.in_region = Region::Slice(ShapeOf(g, nodes.front()->inputs[0]), 2, b, e);
  if (!all_cols) {
    t.in_region.begin[3] = cb;
    t.in_region.end[3] = ce;
  }
  return t;
}

StatusOr<double> ChainReadFactor(const Graph& g,
                                 const std::vector<const Node*>& nodes,
                                 const std::vector<double>& shares,
                                 int tiles_per_band) {
  ASSIGN_OR_RETURN(auto tiles, TileChain(g, nodes, shares, tiles_per_band));
  const Shape& in = ShapeOf(g, nodes.front()->inputs[0]);
  double read = 0;
  for (const auto& t : tiles) {
    read += double(t.in_region.end[2] - t.in_region.begin[2]) *
            double(t.in_region.end[3] - t.in_region.begin[3]);
  }
  return read / (double(in[2]) * double(in[3]));
}

StatusOr<TileShape> ParseTileShape(const std::string& s) {
  if (s == "strips") return TileShape::kStrips;
  if (s == "2d") return TileShape::k2D;
  return InvalidArgument("tiles '" + s + "': expected strips or 2d");
}

int ChooseTilesPerBand(const Graph& g, const std::vector<const Node*>& nodes,
                       const std::vector<double>& shares, TileShape shape) {
  // Judged on the output map alone, not on the chain's windows, so that
  // every chain ending in maps of one size takes the same layout: a
  // residual block's branches and its shortcut then meet on the same tiles
  // and the add needs no data from another device.
  if (shape == TileShape::kStrips)
    return TileChain(g, nodes, shares, 1).ok() ? 1 : 0;
  const Shape& out = ShapeOf(g, nodes.back()->outputs[0]);
  const int n = static_cast<int>(shares.size());
  int best = 0;
  double best_read = 0;
  for (int per_band = 2; per_band <= n; ++per_band) {
    auto layout = TileLayout(out[2], out[3], shares, per_band);
    if (!layout.ok() || !TileChain(g, nodes, shares, per_band).ok()) continue;
    const double read = UnitHaloFactor(out[2], out[3], layout.value());
    if (best == 0 || read < best_read - 1e-9) {
      best = per_band;
      best_read = read;
    }
  }
  return best;
}

}  // namespace shoal
