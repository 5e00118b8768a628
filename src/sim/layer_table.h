// The profiling database of one device, layer by layer (the collaborative-
// execution paper's "profiled data from some layers and their splitted
// versions"): a layer's whole measurement, timed inside the model and
// alone, and its split variants, timed alone. A split size never measured
// is read off its own layer's curve, which the regressions over every layer
// cannot do: on one core AlexNet's first conv (3 input channels, stride 4)
// runs at a fifth of the MAC rate of its third.
#ifndef SHOAL_SIM_LAYER_TABLE_H_
#define SHOAL_SIM_LAYER_TABLE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/cost.h"
#include "sim/profile.h"

namespace shoal {

// A node's time two ways. `context_s`: as a step inside a longer fragment,
// its input and output already in the kernels' layout. `alone_s`: as a
// fragment of its own, reordering its input from and its output to the
// plain layout that transfers carry. `whole`: the node is the layer as
// profiled, not a split of it.
struct NodeTimes {
  double context_s = 0;
  double alone_s = 0;
  bool whole = false;
};

class LayerTable {
 public:
  // Samples of one model only: layer names are per model.
  void Add(const LayerSample& s);
  bool empty() const { return layers_.empty(); }
  // The node's times from its layer's samples; nullopt when its layer (by
  // node name and op) was never profiled.
  std::optional<NodeTimes> Find(const NodeCost& c) const;
  bool operator==(const LayerTable&) const = default;

 private:
  struct Point {
    double x = 0;  // MACs, or bytes for layers without MACs
    double bytes = 0;
    double alone_s = 0;
    bool operator==(const Point&) const = default;
  };
  struct Layer {
    bool has_whole = false;
    int64_t whole_macs = 0, whole_bytes = 0;
    double whole_context_s = 0, whole_alone_s = 0;
    // Variants by kind ("lop", "rows"): a lop slice and a strip of rows
    // with the same MACs move different bytes and run at different speeds.
    std::map<std::string, std::vector<Point>> kinds;
    bool operator==(const Layer&) const = default;
  };
  std::map<std::pair<std::string, std::string>, Layer> layers_;
};

// Piecewise-linear through `pts` (sorted by x) at x: between neighbours
// linearly; below the first along the line through the first two, never
// under proportional to the first; above the last proportional to it.
double Interpolate(const std::vector<std::pair<double, double>>& pts, double x);

}  // namespace shoal

#endif  // SHOAL_SIM_LAYER_TABLE_H_
