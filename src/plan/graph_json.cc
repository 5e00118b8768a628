#include "plan/graph_json.h"

#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "plan/json_ints.h"

namespace shoal {

using nlohmann::json;

namespace {

json AttrToJson(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return {{"i", *i}};
  if (auto* f = std::get_if<float>(&v)) return {{"f", *f}};
  if (auto* s = std::get_if<std::string>(&v)) return {{"s", *s}};
  if (auto* is = std::get_if<std::vector<int64_t>>(&v)) return {{"ints", *is}};
  return {{"floats", std::get<std::vector<float>>(v)}};
}

StatusOr<AttrValue> AttrFromJson(const json& j) {
  if (!j.is_object() || j.size() != 1) {
    return InvalidArgument("attribute is not a one-key object: " +
                           JsonBrief(j));
  }
  // Not `*j.items().begin()`: that names a temporary iterator, gone before
  // the key is read (ASan: stack-use-after-scope).
  const auto it = j.begin();
  const std::string& k = it.key();
  const json& v = it.value();
  if (k == "i") return AttrValue(JsonInt<int64_t>(v));
  if (k == "f") return AttrValue(v.get<float>());
  if (k == "s") return AttrValue(v.get<std::string>());
  if (k == "ints") return AttrValue(JsonInts<int64_t>(v));
  if (k == "floats") return AttrValue(v.get<std::vector<float>>());
  return InvalidArgument("unknown attribute type '" + k + "'");
}

}  // namespace

json GraphToJson(const Graph& g) {
  json j;
  j["name"] = g.name;
  j["inputs"] = json::array();
  for (const auto& in : g.inputs) {
    j["inputs"].push_back({{"name", in}, {"shape", g.tensors.at(in).shape}});
  }
  j["weights"] = json::array();
  for (const auto& [name, t] : g.tensors) {
    if (t.is_weight())
      j["weights"].push_back({{"name", name}, {"shape", t.shape}});
  }
  j["nodes"] = json::array();
  for (const auto& n : g.nodes) {
    json a = json::object();
    for (const auto& [k, v] : n.attrs.map()) a[k] = AttrToJson(v);
    j["nodes"].push_back({{"name", n.name},
                          {"op", n.op},
                          {"inputs", n.inputs},
                          {"outputs", n.outputs},
                          {"attrs", a}});
  }
  j["outputs"] = g.outputs;
  return j;
}

StatusOr<Graph> GraphFromJson(const json& j) {
  Graph g;
  try {
    g.name = j.value("name", "");
    for (const auto& in : j.at("inputs")) {
      RETURN_IF_ERROR(g.AddInput(in.at("name").get<std::string>(),
                                 JsonInts<int64_t>(in.at("shape"))));
    }
    for (const auto& w : j.at("weights")) {
      RETURN_IF_ERROR(g.AddWeight(w.at("name").get<std::string>(),
                                  JsonInts<int64_t>(w.at("shape"))));
    }
    for (const auto& jn : j.at("nodes")) {
      Node n;
      n.name = jn.at("name").get<std::string>();
      n.op = jn.at("op").get<std::string>();
      n.inputs = jn.at("inputs").get<std::vector<std::string>>();
      n.outputs = jn.at("outputs").get<std::vector<std::string>>();
      for (const auto& [k, v] : jn.at("attrs").items()) {
        ASSIGN_OR_RETURN(AttrValue a, AttrFromJson(v));
        n.attrs.Set(k, std::move(a));
      }
      RETURN_IF_ERROR(g.AddNode(std::move(n)));
    }
    g.outputs = j.at("outputs").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("malformed graph: ") + e.what());
  }
  RETURN_IF_ERROR(InferShapes(&g));
  // A merge point has inputs only: it adds up partial sums and forwards them.
  if (!g.nodes.empty()) RETURN_IF_ERROR(VerifyGraph(g));
  return g;
}

}  // namespace shoal
