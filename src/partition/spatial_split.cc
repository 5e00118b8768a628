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
  if (n.op == "Conv") {
    const Shape& w = ShapeOf(g, n.inputs[1]);
    kernel.assign(w.begin() + 2, w.end());
  }
  return ResolveWindow(n, spatial, kernel);
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
    if (n.op == "AveragePool" && n.attrs.GetInt("ceil_mode", 0) != 0 &&
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

StatusOr<std::vector<Tile>> TileChain(const Graph& g,
                                      const std::vector<const Node*>& nodes,
                                      const std::vector<double>& shares) {
  if (nodes.empty()) return InvalidArgument("empty spatial chain");
  for (size_t i = 0; i < nodes.size(); ++i) {
    RETURN_IF_ERROR(CheckTileable(g, *nodes[i]));
    if (i > 0 && nodes[i]->inputs[0] != nodes[i - 1]->outputs[0]) {
      return InvalidArgument("spatial chain: " + nodes[i]->name +
                             " does not read " + nodes[i - 1]->name);
    }
  }
  const Shape& out_shape = ShapeOf(g, nodes.back()->outputs[0]);
  auto counts = SplitCounts(out_shape[2], shares);
  if (!counts.ok()) {
    return counts.status().WithContext(
        "layer " + nodes.back()->name + ": its " +
        std::to_string(out_shape[2]) + " rows cannot be split over " +
        std::to_string(shares.size()) + " devices");
  }
  std::vector<Tile> tiles;
  int64_t row = 0;
  for (int64_t c : counts.value()) {
    ASSIGN_OR_RETURN(Tile t, TileRows(g, nodes, row, row + c));
    row += c;
    tiles.push_back(std::move(t));
  }
  return tiles;
}

StatusOr<Tile> TileRows(const Graph& g, const std::vector<const Node*>& nodes,
                        int64_t out_begin, int64_t out_end) {
  const Shape& out_shape = ShapeOf(g, nodes.back()->outputs[0]);
  if (out_begin < 0 || out_end > out_shape[2] || out_begin >= out_end) {
    return InvalidArgument("layer " + nodes.back()->name + ": rows [" +
                           std::to_string(out_begin) + ", " +
                           std::to_string(out_end) + ") are not within its " +
                           std::to_string(out_shape[2]) + " rows");
  }
  Tile t;
  int64_t b = out_begin, e = out_end;
  t.out_region = Region::Slice(out_shape, 2, b, e);
  t.nodes.resize(nodes.size());
  t.rows.resize(nodes.size());
  // Walk back from the last layer: rows needed at each layer's input.
  for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
    Node n = *nodes[i];
    t.rows[i] = e - b;
    if (IsWindowOp(n.op)) {
      ASSIGN_OR_RETURN(WindowGeometry geo, Geometry(g, n));
      const size_t r = geo.kernel.size();
      Window1D w{geo.kernel[0],    geo.stride[0],  geo.dilation[0],
                 geo.pad_begin[0], geo.pad_end[0], ShapeOf(g, n.inputs[0])[2]};
      StripInput s = InputRowsFor(w, b, e);
      std::vector<int64_t> pads(2 * r);
      for (size_t k = 0; k < r; ++k) {
        pads[k] = geo.pad_begin[k];
        pads[r + k] = geo.pad_end[k];
      }
      pads[0] = s.pad_begin;
      pads[r] = s.pad_end;
      n.attrs.Set("pads", pads);
      n.attrs.Set("auto_pad", std::string("NOTSET"));
      if (n.op != "Conv") {
        // Explicit padding reproduces ceil mode's extra window exactly.
        n.attrs.Set("ceil_mode", int64_t{0});
        if (geo.ceil_mode) {
          // Columns: keep ceil mode's extra window with an explicit pad.
          const Shape& in = ShapeOf(g, n.inputs[0]);
          const Shape& o = ShapeOf(g, n.outputs[0]);
          for (size_t k = 1; k < r; ++k) {
            const int64_t span = (geo.kernel[k] - 1) * geo.dilation[k] + 1;
            const int64_t need = (o[2 + k] - 1) * geo.stride[k] + span -
                                 in[2 + k] - geo.pad_begin[k];
            pads[r + k] = std::max<int64_t>(need, 0);
          }
          n.attrs.Set("pads", pads);
        }
      }
      b = s.begin;
      e = s.end;
    }
    t.nodes[i] = std::move(n);
  }
  t.in_region = Region::Slice(ShapeOf(g, nodes.front()->inputs[0]), 2, b, e);
  return t;
}

StatusOr<double> ChainReadFactor(const Graph& g,
                                 const std::vector<const Node*>& nodes,
                                 const std::vector<double>& shares) {
  ASSIGN_OR_RETURN(auto tiles, TileChain(g, nodes, shares));
  int64_t rows = 0;
  for (const auto& t : tiles) rows += t.in_region.end[2] - t.in_region.begin[2];
  return static_cast<double>(rows) /
         static_cast<double>(ShapeOf(g, nodes.front()->inputs[0])[2]);
}

}  // namespace shoal
