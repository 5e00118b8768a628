#include "sim/layer_table.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shoal {

namespace {

// "lop 1/4" -> "lop"; the split kind of a variant.
std::string KindOf(const std::string& variant) {
  return variant.substr(0, variant.find(' '));
}

}  // namespace

double Interpolate(const std::vector<std::pair<double, double>>& pts,
                   double x) {
  if (pts.empty()) return 0;
  const auto& [x0, y0] = pts.front();
  const double prop0 = x0 > 0 ? y0 * x / x0 : y0;
  if (pts.size() == 1) return std::max(0.0, prop0);
  if (x <= x0) {
    const auto& [x1, y1] = pts[1];
    const double line = y0 - (y1 - y0) / (x1 - x0) * (x0 - x);
    return std::max({0.0, line, prop0});
  }
  for (size_t i = 1; i < pts.size(); ++i) {
    const auto& [xa, ya] = pts[i - 1];
    const auto& [xb, yb] = pts[i];
    if (x <= xb) return ya + (yb - ya) * (x - xa) / (xb - xa);
  }
  const auto& [xl, yl] = pts.back();
  return xl > 0 ? yl * x / xl : yl;
}

void LayerTable::Add(const LayerSample& s) {
  Layer& l = layers_[{s.layer, s.op}];
  if (s.variant == "whole") {
    l.has_whole = true;
    l.whole_macs = s.macs;
    l.whole_bytes = s.bytes;
    l.whole_context_s = s.seconds;
    // Older profiles timed whole layers alone only.
    l.whole_alone_s = s.alone_seconds > 0 ? s.alone_seconds : s.seconds;
    return;
  }
  Point p;
  p.x = double(s.macs > 0 ? s.macs : s.bytes);
  p.bytes = double(s.bytes);
  p.alone_s = s.seconds;
  l.kinds[KindOf(s.variant)].push_back(p);
}

std::optional<NodeTimes> LayerTable::Find(const NodeCost& c) const {
  auto it = layers_.find({c.name, c.op});
  if (it == layers_.end()) return std::nullopt;
  const Layer& l = it->second;
  const int64_t bytes = c.input_bytes() + c.output_bytes() + c.weight_bytes();
  NodeTimes t;
  if (l.has_whole && l.whole_macs == c.macs && l.whole_bytes == bytes) {
    t.context_s = l.whole_context_s;
    t.alone_s = l.whole_alone_s;
    t.whole = true;
    return t;
  }
  const double x = double(c.macs > 0 ? c.macs : bytes);
  // Each kind's curve, with the whole layer as its last point; the kind
  // whose bytes at these MACs come closest to the node's is the node's.
  double best_miss = std::numeric_limits<double>::infinity();
  auto consider = [&](const std::vector<Point>& variants) {
    std::vector<Point> pts = variants;
    if (l.has_whole) {
      pts.push_back(
          Point{double(l.whole_macs > 0 ? l.whole_macs : l.whole_bytes),
                double(l.whole_bytes), l.whole_alone_s});
    }
    if (pts.empty()) return;
    std::sort(pts.begin(), pts.end(),
              [](const Point& a, const Point& b) { return a.x < b.x; });
    std::vector<std::pair<double, double>> by, ts;
    for (const auto& p : pts) {
      // Equal sizes (a variant equal to the whole): keep one.
      if (!ts.empty() && ts.back().first == p.x) continue;
      by.emplace_back(p.x, p.bytes);
      ts.emplace_back(p.x, p.alone_s);
    }
    const double miss = std::abs(Interpolate(by, x) - double(bytes)) /
                        std::max(1.0, double(bytes));
    if (miss < best_miss) {
      best_miss = miss;
      t.alone_s = Interpolate(ts, x);
    }
  };
  if (l.kinds.empty()) consider({});
  for (const auto& [kind, variants] : l.kinds) consider(variants);
  if (!std::isfinite(best_miss)) return std::nullopt;
  // Inside a fragment a split runs in the kernels' layout like the whole
  // layer does in the model: scale by the whole layer's context / alone.
  const double ratio = l.has_whole && l.whole_alone_s > 0
                           ? l.whole_context_s / l.whole_alone_s
                           : 1.0;
  t.context_s = t.alone_s * ratio;
  return t;
}

}  // namespace shoal
