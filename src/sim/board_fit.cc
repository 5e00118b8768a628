#include "sim/board_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>

#include "graph/cost.h"
#include "graph/shape_inference.h"
#include "models/zoo.h"

namespace shoal {
namespace {

// The zoo's builders of the models ncnn publishes: torchvision's AlexNet
// (ncnn's is Caffe's, with groups and LRN; a few percent more MACs),
// VGG16, ResNet-18 and -50, MobileNet v1 and v2.
std::vector<PublishedTime> MakeTimes() {
  return {
      {"pi3b+", "alexnet", 159.09},
      {"pi3b+", "vgg16", 1902.28},
      {"pi3b+", "resnet18", 271.93},
      {"pi3b+", "resnet50", 587.42},
      {"pi3b+", "mobilenet-v1", 108.66},
      {"pi3b+", "mobilenet-v2", 111.68},
      {"pi4b", "alexnet", 76.40},
      {"pi4b", "vgg16", 547.09},
      {"pi4b", "resnet18", 123.12},
      {"pi4b", "resnet50", 262.83},
      {"pi4b", "mobilenet-v1", 61.17},
      {"pi4b", "mobilenet-v2", 61.88},
      {"pi-zero-2w", "alexnet", 272.18},
      {"pi-zero-2w", "resnet18", 353.45},
      {"pi-zero-2w", "resnet50", 782.63},
      {"pi-zero-2w", "mobilenet-v1", 163.19},
      {"pi-zero-2w", "mobilenet-v2", 147.39},
  };
}

// A zoo model's node costs, computed once per process.
StatusOr<const std::vector<NodeCost>*> ModelCosts(const std::string& model) {
  static std::mutex mu;
  static std::map<std::string, std::vector<NodeCost>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(model);
  if (it != cache.end()) return &it->second;
  const ZooEntry* e = Zoo::Global().Find(model);
  if (e == nullptr) return NotFound("no zoo model '" + model + "'");
  ASSIGN_OR_RETURN(Graph g, e->build(e->input_shape));
  RETURN_IF_ERROR(InferShapes(&g));
  ASSIGN_OR_RETURN(GraphCost c, ComputeGraphCost(g));
  return &cache.emplace(model, std::move(c.nodes)).first->second;
}

double SumMs(const BoardRates& r, const std::vector<NodeCost>& nodes) {
  double s = 0;
  for (const auto& n : nodes) s += BoardNodeSeconds(r, n);
  return s * 1e3;
}

constexpr int kParams = 5;
using Point = std::array<double, kParams>;

BoardRates FromLogs(const Point& x) {
  return BoardRates{std::exp(x[0]), std::exp(x[1]), std::exp(x[2]),
                    std::exp(x[3]), std::exp(x[4])};
}

// Nelder-Mead (reflection 1, expansion 2, contraction and shrink 1/2) for a
// fixed number of iterations: small, deterministic, enough for five
// parameters of a smooth-enough loss.
template <typename F>
Point Minimise(F f, Point x0, double step, int iterations) {
  std::array<Point, kParams + 1> s;
  std::array<double, kParams + 1> v;
  s[0] = x0;
  for (int i = 0; i < kParams; ++i) {
    s[i + 1] = x0;
    s[i + 1][i] += step;
  }
  for (int i = 0; i <= kParams; ++i) v[i] = f(s[i]);
  auto along = [](const Point& c, const Point& p, double t) {
    Point q;
    for (int i = 0; i < kParams; ++i) q[i] = c[i] + t * (p[i] - c[i]);
    return q;
  };
  for (int it = 0; it < iterations; ++it) {
    std::array<int, kParams + 1> o;
    for (int i = 0; i <= kParams; ++i) o[i] = i;
    std::sort(o.begin(), o.end(), [&](int a, int b) { return v[a] < v[b]; });
    const int best = o[0], worst = o[kParams], second = o[kParams - 1];
    Point c{};
    for (int i = 0; i < kParams; ++i) {
      for (int k = 0; k < kParams; ++k) c[k] += s[o[i]][k] / kParams;
    }
    const Point r = along(c, s[worst], -1.0);
    const double fr = f(r);
    if (fr < v[best]) {
      const Point e = along(c, s[worst], -2.0);
      const double fe = f(e);
      s[worst] = fe < fr ? e : r;
      v[worst] = std::min(fe, fr);
    } else if (fr < v[second]) {
      s[worst] = r;
      v[worst] = fr;
    } else {
      const Point k = along(c, s[worst], 0.5);
      const double fk = f(k);
      if (fk < v[worst]) {
        s[worst] = k;
        v[worst] = fk;
      } else {
        for (int i = 0; i <= kParams; ++i) {
          if (i == best) continue;
          s[i] = along(s[best], s[i], 0.5);
          v[i] = f(s[i]);
        }
      }
    }
  }
  int best = 0;
  for (int i = 1; i <= kParams; ++i) {
    if (v[i] < v[best]) best = i;
  }
  return s[best];
}

}  // namespace

const std::vector<PublishedTime>& NcnnPublishedTimes() {
  static const std::vector<PublishedTime> times = MakeTimes();
  return times;
}

std::vector<PublishedTime> PublishedFor(const std::string& board) {
  std::vector<PublishedTime> out;
  for (const auto& t : NcnnPublishedTimes()) {
    if (t.board == board) out.push_back(t);
  }
  return out;
}

StatusOr<double> PredictModelMs(const BoardRates& rates,
                                const std::string& model) {
  ASSIGN_OR_RETURN(const std::vector<NodeCost>* nodes, ModelCosts(model));
  return SumMs(rates, *nodes);
}

StatusOr<std::vector<BoardCheckRow>> CheckBoard(const std::string& board,
                                                const BoardRates& rates) {
  std::vector<BoardCheckRow> rows;
  for (const auto& t : PublishedFor(board)) {
    ASSIGN_OR_RETURN(double ms, PredictModelMs(rates, t.model));
    rows.push_back(BoardCheckRow{t.model, t.ms, ms});
  }
  return rows;
}

StatusOr<BoardRates> FitBoardRates(const std::string& board) {
  const std::vector<PublishedTime> times = PublishedFor(board);
  if (times.empty()) {
    return NotFound("ncnn publishes no figures for board '" + board + "'");
  }
  std::vector<std::pair<const std::vector<NodeCost>*, double>> data;
  for (const auto& t : times) {
    ASSIGN_OR_RETURN(const std::vector<NodeCost>* nodes, ModelCosts(t.model));
    data.emplace_back(nodes, t.ms);
  }
  auto loss = [&](const Point& x) {
    double l = 0;
    const BoardRates r = FromLogs(x);
    for (const auto& [nodes, ms] : data) {
      const double e = std::log(SumMs(r, *nodes) / ms);
      l += e * e;
    }
    // The weak pull (see the header): 0.05 of a squared log ratio.
    const double w = x[0] - x[1] - std::log(1.5);
    const double d = x[2] - x[1] - std::log(0.25);
    return l + 0.05 * (w * w + d * d);
  };
  const Point start = {std::log(8e9), std::log(4e9), std::log(1e9),
                       std::log(2e9), std::log(1e-4)};
  return FromLogs(Minimise(loss, start, 0.5, 4000));
}

}  // namespace shoal
