#include "plan/plan_json.h"

#include <fstream>
#include <sstream>

#include "graph/shape_check.h"
#include "plan/graph_json.h"
#include "plan/json_ints.h"
#include "plan/json_parse.h"
#include "plan/plan_verify.h"

namespace shoal {

using nlohmann::json;

namespace {

// A device's share sizes splits and its memory bounds them: a NaN, an
// infinity or 1e-300 would give splits that never end or never fit.
Status CheckPlanDevice(const PlanDevice& d) {
  if (!(d.share >= kMinShare && d.share <= kMaxShare)) {
    return InvalidArgument("plan device '" + d.name + "' has share " +
                           std::to_string(d.share) + "; it must be within [" +
                           std::to_string(kMinShare) + ", " +
                           std::to_string(kMaxShare) + "]");
  }
  if (d.memory_bytes < 0) {
    return InvalidArgument("plan device '" + d.name +
                           "' has a negative memory_bytes");
  }
  return Status::Ok();
}

json RegionToJson(const Region& r) {
  return {{"begin", r.begin}, {"end", r.end}};
}

// A region's axes are indexed together everywhere; mismatched or huge
// ranks are refused here, before anything walks them.
StatusOr<Region> RegionFromJson(const json& j) {
  Region r{JsonInts<int64_t>(j.at("begin")), JsonInts<int64_t>(j.at("end"))};
  if (r.begin.size() != r.end.size() ||
      r.begin.size() > static_cast<size_t>(kMaxTensorRank)) {
    return InvalidArgument("region " + JsonBrief(j) +
                           " needs begin and end of one rank (at most " +
                           std::to_string(kMaxTensorRank) + ")");
  }
  return r;
}

json EndpointToJson(const Endpoint& e) {
  json j = {{"task", e.task}, {"tensor", e.tensor}};
  j["region"] = RegionToJson(e.region);
  return j;
}

StatusOr<Endpoint> EndpointFromJson(const json& j) {
  ASSIGN_OR_RETURN(Region r, RegionFromJson(j.at("region")));
  return Endpoint{JsonInt<int>(j.at("task")), j.at("tensor").get<std::string>(),
                  std::move(r)};
}

json PredictionToJson(const PlanPrediction& pr) {
  json j = {{"objective", pr.objective},
            {"method", pr.method},
            {"solver", pr.solver},
            {"latency_s", pr.latency_s},
            {"throughput_rps", pr.throughput_rps},
            {"concurrency", pr.concurrency}};
  j["devices"] = json::array();
  for (const auto& d : pr.devices) {
    j["devices"].push_back({{"device", d.device},
                            {"compute_s", d.compute_s},
                            {"communication_s", d.communication_s},
                            {"idle_s", d.idle_s}});
  }
  j["alternatives"] = json::array();
  for (const auto& a : pr.alternatives) {
    j["alternatives"].push_back({{"name", a.name},
                                 {"latency_s", a.latency_s},
                                 {"throughput_rps", a.throughput_rps},
                                 {"note", a.note}});
  }
  return j;
}

PlanPrediction PredictionFromJson(const json& j) {
  PlanPrediction pr;
  pr.objective = j.at("objective").get<std::string>();
  pr.method = j.at("method").get<std::string>();
  pr.solver = j.value("solver", "");
  pr.latency_s = j.at("latency_s").get<double>();
  pr.throughput_rps = j.at("throughput_rps").get<double>();
  pr.concurrency = JsonIntOr<int>(j, "concurrency", 0);
  for (const auto& d : j.at("devices")) {
    pr.devices.push_back(DevicePrediction{
        d.at("device").get<std::string>(), d.at("compute_s").get<double>(),
        d.at("communication_s").get<double>(), d.at("idle_s").get<double>()});
  }
  for (const auto& a : j.at("alternatives")) {
    pr.alternatives.push_back(PlanAlternative{
        a.at("name").get<std::string>(), a.at("latency_s").get<double>(),
        a.at("throughput_rps").get<double>(), a.value("note", "")});
  }
  return pr;
}

}  // namespace

json PlanToJson(const Plan& p) {
  json j;
  j["format"] = "shoal-plan";
  j["version"] = p.version;
  j["strategy"] = p.strategy;
  j["model"] = {{"spec", p.model.spec},
                {"input_shape", p.model.input_shape},
                {"weights_seed", p.model.weights_seed},
                {"fuse_batchnorm", p.model.fuse_batchnorm}};
  if (p.model.lcp_branches > 0) {
    j["model"]["lcp_branches"] = p.model.lcp_branches;
    j["model"]["lcp_fatten_pct"] = p.model.lcp_fatten_pct;
    if (!p.model.lcp_shares.empty()) {
      j["model"]["lcp_shares"] = p.model.lcp_shares;
    }
  }
  j["devices"] = json::array();
  for (const auto& d : p.devices) {
    j["devices"].push_back({{"name", d.name},
                            {"share", d.share},
                            {"memory_bytes", d.memory_bytes}});
  }
  j["input"] = {{"name", p.input_name},
                {"shape", p.input_shape},
                {"device", p.input_device}};
  if (p.input_pixels) j["input"]["pixels"] = true;
  if (p.broadcast.fanout > 0) {
    j["broadcast"] = {{"fanout", p.broadcast.fanout},
                      {"chunk_bytes", p.broadcast.chunk_bytes}};
    if (p.broadcast.scatter) j["broadcast"]["scatter"] = true;
  }
  if (p.wire.dtype != WireDtype::kF32 || p.wire.lz4) {
    j["wire"] = {{"dtype", WireDtypeName(p.wire.dtype)},
                 {"compression", p.wire.lz4 ? "lz4" : "none"}};
  }
  j["output"] = {{"name", p.output_name},
                 {"shape", p.output_shape},
                 {"device", p.output_device}};
  j["decisions"] = json::array();
  for (const auto& d : p.decisions) {
    j["decisions"].push_back(
        {{"layer", d.layer}, {"scheme", d.scheme}, {"reason", d.reason}});
  }
  if (p.prediction) j["prediction"] = PredictionToJson(*p.prediction);
  j["tasks"] = json::array();
  for (const auto& t : p.tasks) {
    json w = json::array();
    for (const auto& s : t.weights) {
      json js = {{"name", s.name},
                 {"source", s.source},
                 {"region", RegionToJson(s.region)}};
      if (!s.view.empty()) js["view"] = s.view;
      w.push_back(std::move(js));
    }
    j["tasks"].push_back({{"id", t.id},
                          {"name", t.name},
                          {"devices", t.devices},
                          {"layer", t.layer},
                          {"scheme", t.scheme},
                          {"weights", w},
                          {"fragment", GraphToJson(t.fragment)}});
  }
  j["transfers"] = json::array();
  for (const auto& x : p.transfers) {
    json jx = {{"src", EndpointToJson(x.src)},
               {"dst", EndpointToJson(x.dst)},
               {"merge", x.merge == Merge::kSum ? "sum" : "copy"},
               {"layer", x.layer}};
    if (x.int8) jx["int8"] = true;
    j["transfers"].push_back(std::move(jx));
  }
  return j;
}

namespace {

// The parts of a plan file. Each throws json::exception on a missing key
// or a wrong type, which PlanFromJson turns into one message.
StatusOr<ModelRef> ModelFromJson(const json& m) {
  ModelRef r;
  r.spec = m.at("spec").get<std::string>();
  r.input_shape = JsonInts<int64_t>(m.at("input_shape"));
  r.weights_seed = JsonInt<uint64_t>(m.at("weights_seed"));
  r.fuse_batchnorm = m.at("fuse_batchnorm").get<bool>();
  r.lcp_branches = JsonIntOr<int64_t>(m, "lcp_branches", 0);
  r.lcp_fatten_pct = m.value("lcp_fatten_pct", 0.0);
  if (r.lcp_branches < 0 || r.lcp_fatten_pct < 0) {
    return InvalidArgument(
        "model.lcp_branches and model.lcp_fatten_pct "
        "must not be negative");
  }
  if (!m.contains("lcp_shares")) return r;
  const auto& s = m.at("lcp_shares");
  if (!s.is_array() || static_cast<int64_t>(s.size()) != r.lcp_branches) {
    return InvalidArgument(
        "model.lcp_shares must be one number per LCP branch");
  }
  for (const auto& v : s) {
    const double x = v.get<double>();
    if (!(x >= kMinShare && x <= kMaxShare)) {
      return InvalidArgument("model.lcp_shares must be within [" +
                             std::to_string(kMinShare) + ", " +
                             std::to_string(kMaxShare) + "]");
    }
    r.lcp_shares.push_back(x);
  }
  return r;
}

StatusOr<WireSettings> WireFromJson(const json& w) {
  WireSettings r;
  ASSIGN_OR_RETURN(r.dtype,
                   ParseWireDtype(w.value("dtype", std::string("f32"))));
  const std::string c = w.value("compression", std::string("none"));
  if (c != "none" && c != "lz4") {
    return InvalidArgument("plan's wire.compression '" + c +
                           "' is not one of none, lz4");
  }
  r.lz4 = c == "lz4";
  return r;
}

StatusOr<Task> TaskFromJson(const json& jt) {
  Task t;
  t.id = JsonInt<int>(jt.at("id"));
  t.name = jt.at("name").get<std::string>();
  t.devices = JsonInts<int>(jt.at("devices"));
  t.layer = jt.at("layer").get<std::string>();
  t.scheme = jt.at("scheme").get<std::string>();
  for (const auto& w : jt.at("weights")) {
    auto r = RegionFromJson(w.at("region"));
    if (!r.ok()) return r.status().WithContext("task " + t.name);
    t.weights.push_back(WeightSlice{w.at("name").get<std::string>(),
                                    w.at("source").get<std::string>(),
                                    std::move(r).value()});
    if (w.contains("view")) {
      t.weights.back().view = JsonInts<int64_t>(w.at("view"));
    }
  }
  auto g = GraphFromJson(jt.at("fragment"));
  if (!g.ok()) return g.status().WithContext("task " + t.name);
  t.fragment = std::move(g).value();
  return t;
}

StatusOr<Transfer> TransferFromJson(const json& jx) {
  Transfer x;
  ASSIGN_OR_RETURN(x.src, EndpointFromJson(jx.at("src")));
  ASSIGN_OR_RETURN(x.dst, EndpointFromJson(jx.at("dst")));
  const std::string merge = jx.at("merge").get<std::string>();
  if (merge != "copy" && merge != "sum") {
    return InvalidArgument("transfer merge '" + merge +
                           "' is neither copy nor sum");
  }
  x.merge = merge == "sum" ? Merge::kSum : Merge::kCopy;
  x.layer = jx.value("layer", "");
  x.int8 = jx.value("int8", false);
  return x;
}

// Everything but the tasks and transfers.
Status HeaderFromJson(const json& j, Plan* p) {
  p->version = JsonInt<int>(j.at("version"));
  if (p->version != kPlanVersion) {
    return InvalidArgument("plan version " + std::to_string(p->version) +
                           " is not supported (this shoal reads version " +
                           std::to_string(kPlanVersion) + ")");
  }
  p->strategy = j.at("strategy").get<std::string>();
  ASSIGN_OR_RETURN(p->model, ModelFromJson(j.at("model")));
  for (const auto& d : j.at("devices")) {
    p->devices.push_back(PlanDevice{d.at("name").get<std::string>(),
                                    d.at("share").get<double>(),
                                    JsonInt<int64_t>(d.at("memory_bytes"))});
    RETURN_IF_ERROR(CheckPlanDevice(p->devices.back()));
  }
  const json& in = j.at("input");
  p->input_name = in.at("name").get<std::string>();
  p->input_shape = JsonInts<int64_t>(in.at("shape"));
  p->input_device = JsonInt<int>(in.at("device"));
  p->input_pixels = in.value("pixels", false);
  if (j.contains("broadcast")) {  // absent in older plans: direct sends
    p->broadcast.fanout = JsonInt<int>(j.at("broadcast").at("fanout"));
    p->broadcast.chunk_bytes =
        JsonInt<int64_t>(j.at("broadcast").at("chunk_bytes"));
    const json& scatter = j.at("broadcast").value("scatter", json(false));
    if (!scatter.is_boolean()) {
      return InvalidArgument("plan's broadcast.scatter is not true or false");
    }
    p->broadcast.scatter = scatter.get<bool>();
  }
  if (j.contains("wire")) {  // absent: float32, uncompressed
    ASSIGN_OR_RETURN(p->wire, WireFromJson(j.at("wire")));
  }
  const json& out = j.at("output");
  p->output_name = out.at("name").get<std::string>();
  p->output_shape = JsonInts<int64_t>(out.at("shape"));
  p->output_device = JsonInt<int>(out.at("device"));
  for (const auto& d : j.at("decisions")) {
    p->decisions.push_back(LayerDecision{d.at("layer").get<std::string>(),
                                         d.at("scheme").get<std::string>(),
                                         d.at("reason").get<std::string>()});
  }
  // Optional: plans made before predictions existed have none.
  if (j.contains("prediction")) {
    p->prediction = PredictionFromJson(j.at("prediction"));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Plan> PlanFromJson(const json& j) {
  Plan p;
  try {
    if (!j.is_object() || j.value("format", "") != "shoal-plan") {
      return InvalidArgument(
          "not a shoal plan (no \"format\": \"shoal-plan\")");
    }
    RETURN_IF_ERROR(HeaderFromJson(j, &p));
    for (const auto& jt : j.at("tasks")) {
      ASSIGN_OR_RETURN(Task t, TaskFromJson(jt));
      p.tasks.push_back(std::move(t));
    }
    for (const auto& jx : j.at("transfers")) {
      ASSIGN_OR_RETURN(Transfer x, TransferFromJson(jx));
      p.transfers.push_back(std::move(x));
    }
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("malformed plan: ") + e.what());
  } catch (const std::bad_alloc&) {
    return InvalidArgument("plan needs more memory than there is to load");
  }
  return p;
}

Status SavePlan(const Plan& p, const std::string& path) {
  std::ofstream f(path);
  if (!f) return InvalidArgument("cannot write plan file " + path);
  f << PlanToJson(p).dump(1) << "\n";
  if (!f) return InvalidArgument("error writing plan file " + path);
  return Status::Ok();
}

StatusOr<Plan> LoadPlan(const std::string& path) {
  std::ifstream f(path);
  if (!f) return NotFound("cannot open plan file " + path);
  ASSIGN_OR_RETURN(json j, ParseJson(f, "plan file " + path));
  auto p = PlanFromJson(j);
  if (!p.ok()) return p.status().WithContext("plan file " + path);
  RETURN_IF_ERROR(VerifyPlan(p.value()).WithContext("plan file " + path));
  return p;
}

}  // namespace shoal
