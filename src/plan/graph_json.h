// A graph (fragment) as JSON, for plans. Attributes keep their type: {"i": 3},
// {"f": 0.5}, {"s": "NOTSET"}, {"ints": [..]}, {"floats": [..]}.
#ifndef SHOAL_PLAN_GRAPH_JSON_H_
#define SHOAL_PLAN_GRAPH_JSON_H_

#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

nlohmann::json GraphToJson(const Graph& g);
// Rebuilds and re-verifies (shape inference) the graph.
StatusOr<Graph> GraphFromJson(const nlohmann::json& j);

}  // namespace shoal

#endif  // SHOAL_PLAN_GRAPH_JSON_H_
