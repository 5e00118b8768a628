// The planner's view of a model: a sequence of units in graph order, each a
// node plus the channel-local ops and reshapes that read only its output
// (they travel with an output split, so they are decided together), with
// the sizes and per-node costs the planners price candidates from.
#ifndef SHOAL_PLANNER_UNITS_H_
#define SHOAL_PLANNER_UNITS_H_

#include <string>
#include <vector>

#include "graph/cost.h"
#include "graph/graph.h"

namespace shoal {

struct PlanUnit {
  std::vector<std::string> nodes;  // head first
  std::vector<NodeCost> costs;     // per node
  std::string output;              // the last node's output
  // Non-weight inputs of the head; `reads_previous` when the head's only
  // one is the previous unit's output (a chain).
  std::vector<std::string> inputs;
  bool reads_previous = false;
  bool splittable = false;  // the head is a conv/fc the lop family splits
  bool tileable = false;    // every node can run on strips of rows
  bool fusable_with_next = false;  // lop here, lip on the next unit: fused
  int64_t out_units = 0;           // what an output split divides
  int64_t in_units = 0;            // what an input split divides
  int64_t weight_bytes = 0;
  int64_t input_bytes = 0;   // of the head's inputs together
  int64_t output_bytes = 0;  // of `output`
  int64_t head_output_bytes = 0;
};

// `g`: shaped, BN folded.
StatusOr<std::vector<PlanUnit>> MakeUnits(const Graph& g);

}  // namespace shoal

#endif  // SHOAL_PLANNER_UNITS_H_
