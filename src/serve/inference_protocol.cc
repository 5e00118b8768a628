#include "serve/inference_protocol.h"

#include <bit>
#include <cstring>

#include "graph/shape.h"
#include "plan/json_parse.h"

namespace shoal {

namespace {

static_assert(std::endian::native == std::endian::little,
              "binary tensor data is little-endian, as float is here");

nlohmann::json TensorJson(const std::string& name, const Shape& shape) {
  return {{"name", name}, {"datatype", "FP32"}, {"shape", shape}};
}

// `v` as a shape: an array of non-negative integers, its element count
// checked before anything is made of it.
StatusOr<Shape> ShapeOf(const nlohmann::json& v, const std::string& what) {
  if (!v.is_array() || v.size() > 16) {
    return InvalidArgument(what +
                           ": \"shape\" must be an array of at most "
                           "16 integers, not " +
                           JsonBrief(v));
  }
  Shape s;
  int64_t n = 1;
  for (const auto& d : v) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      return InvalidArgument(what + ": \"shape\" holds " + JsonBrief(d) +
                             ", not a non-negative integer");
    }
    s.push_back(d.get<int64_t>());
    if (s.back() > kMaxRequestElements ||
        (n *= std::max<int64_t>(1, s.back())) > kMaxRequestElements) {
      return InvalidArgument(what + ": \"shape\" holds more than " +
                             std::to_string(kMaxRequestElements) + " elements");
    }
  }
  return s;
}

// The numbers of a JSON tensor, nested arrays or flat, in row-major order;
// at most `want` of them (more is an error at once).
Status Flatten(const nlohmann::json& v, size_t want, std::vector<float>* out,
               const std::string& what) {
  if (v.is_array()) {
    for (const auto& e : v) RETURN_IF_ERROR(Flatten(e, want, out, what));
    return Status::Ok();
  }
  if (!v.is_number()) {
    return InvalidArgument(what + ": \"data\" holds " + JsonBrief(v) +
                           ", not a number (datatype FP32)");
  }
  if (out->size() == want) {
    return InvalidArgument(what + ": \"data\" holds more than the " +
                           std::to_string(want) + " values its shape has");
  }
  out->push_back(v.get<float>());
  return Status::Ok();
}

bool Flag(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto p = obj.find("parameters");
  if (p == obj.end() || !p->is_object()) return false;
  auto f = p->find(key);
  return f != p->end() && f->is_boolean() && f->get<bool>();
}

}  // namespace

nlohmann::json ModelMetadataJson(const OipModel& m) {
  return {{"name", m.name},
          {"versions", nlohmann::json::array({"1"})},
          {"platform", "shoal"},
          {"inputs", {TensorJson(m.input_name, m.input_shape)}},
          {"outputs", {TensorJson(m.output_name, m.output_shape)}}};
}

StatusOr<OipRequest> ParseInferRequest(std::string_view body,
                                       std::optional<int64_t> header_length,
                                       const OipModel& m) {
  std::string_view json_text = body;
  std::string_view binary;
  if (header_length) {
    if (*header_length < 0 ||
        *header_length > static_cast<int64_t>(body.size())) {
      return InvalidArgument("Inference-Header-Content-Length is " +
                             std::to_string(*header_length) +
                             " but the body holds " +
                             std::to_string(body.size()) + " bytes");
    }
    json_text = json_text.substr(0, *header_length);
    binary = body.substr(*header_length);
  }
  const int64_t max_json =
      (int64_t{64} << 10) + kMaxJsonBytesPerValue * NumElements(m.input_shape);
  if (static_cast<int64_t>(json_text.size()) > max_json) {
    return InvalidArgument("the request's JSON is " +
                           std::to_string(json_text.size()) +
                           " bytes; for model " + m.name + "'s input of " +
                           std::to_string(NumElements(m.input_shape)) +
                           " values it may be " + std::to_string(max_json) +
                           " at most: send a large tensor as binary data (the "
                           "Inference-Header-Content-Length header)");
  }
  ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(json_text, "the request"));
  if (!j.is_object()) {
    return InvalidArgument("the request must be a JSON object, not " +
                           JsonBrief(j));
  }
  OipRequest r;
  r.binary_output = Flag(j, "binary_data_output");
  if (auto id = j.find("id"); id != j.end()) {
    if (!id->is_string()) {
      return InvalidArgument("\"id\" must be a string, not " + JsonBrief(*id));
    }
    r.id = id->get<std::string>();
  }
  auto inputs = j.find("inputs");
  if (inputs == j.end() || !inputs->is_array() || inputs->size() != 1) {
    return InvalidArgument("\"inputs\" must be an array of one tensor (model " +
                           m.name + " has one input, '" + m.input_name +
                           "'), not " +
                           (inputs == j.end() ? "absent" : JsonBrief(*inputs)));
  }
  const nlohmann::json& in = (*inputs)[0];
  const std::string what = "input '" + m.input_name + "'";
  if (!in.is_object() || !in.contains("name") || !in["name"].is_string()) {
    return InvalidArgument("inputs[0] must be an object with a \"name\"");
  }
  if (in["name"] != m.input_name) {
    return InvalidArgument(
        "inputs[0] is named '" + in["name"].get<std::string>().substr(0, 80) +
        "'; model " + m.name + " has one input, '" + m.input_name + "'");
  }
  if (!in.contains("datatype") || in["datatype"] != "FP32") {
    return InvalidArgument(
        what + ": \"datatype\" must be \"FP32\", not " +
        (in.contains("datatype") ? JsonBrief(in["datatype"]) : "absent"));
  }
  if (!in.contains("shape")) {
    return InvalidArgument(what + ": \"shape\" is missing");
  }
  ASSIGN_OR_RETURN(Shape shape, ShapeOf(in["shape"], what));
  if (shape != m.input_shape) {
    return InvalidArgument(what + " has shape " + ShapeToString(shape) +
                           " but model " + m.name + " expects " +
                           ShapeToString(m.input_shape));
  }
  const size_t n = static_cast<size_t>(NumElements(shape));
  std::vector<float> data;
  const nlohmann::json* params =
      in.contains("parameters") ? &in["parameters"] : nullptr;
  if (params != nullptr && params->is_object() &&
      params->contains("binary_data_size")) {
    const auto& size = (*params)["binary_data_size"];
    if (!header_length) {
      return InvalidArgument(what +
                             " has binary_data_size but the request has no "
                             "Inference-Header-Content-Length header");
    }
    if (!size.is_number_integer() ||
        size.get<int64_t>() != static_cast<int64_t>(n * sizeof(float))) {
      return InvalidArgument(what + ": binary_data_size is " + JsonBrief(size) +
                             "; " + std::to_string(n) + " FP32 values take " +
                             std::to_string(n * sizeof(float)) + " bytes");
    }
    if (binary.size() != n * sizeof(float)) {
      return InvalidArgument(what + ": the body holds " +
                             std::to_string(binary.size()) +
                             " bytes of binary data after the JSON header, "
                             "binary_data_size says " +
                             std::to_string(n * sizeof(float)));
    }
    data.resize(n);
    std::memcpy(data.data(), binary.data(), binary.size());
  } else {
    if (!binary.empty()) {
      return InvalidArgument(
          "the body holds " + std::to_string(binary.size()) +
          " bytes after the JSON header, but no input has binary_data_size");
    }
    if (!in.contains("data")) {
      return InvalidArgument(what +
                             " has neither \"data\" nor a binary_data_size "
                             "parameter");
    }
    data.reserve(n);
    RETURN_IF_ERROR(Flatten(in["data"], n, &data, what));
    if (data.size() != n) {
      return InvalidArgument(what + ": \"data\" holds " +
                             std::to_string(data.size()) + " values; shape " +
                             ShapeToString(shape) + " has " +
                             std::to_string(n));
    }
  }
  r.input = Tensor(shape, std::move(data));
  if (auto outs = j.find("outputs"); outs != j.end()) {
    if (!outs->is_array()) {
      return InvalidArgument("\"outputs\" must be an array, not " +
                             JsonBrief(*outs));
    }
    for (const auto& o : *outs) {
      if (!o.is_object() || !o.contains("name") || o["name"] != m.output_name) {
        return InvalidArgument(
            "\"outputs\" names " +
            (o.is_object() && o.contains("name") ? JsonBrief(o["name"])
                                                 : JsonBrief(o)) +
            "; model " + m.name + " has one output, '" + m.output_name + "'");
      }
      if (Flag(o, "binary_data")) r.binary_output = true;
    }
  }
  return r;
}

OipReply MakeInferReply(const OipRequest& req, const Tensor& out,
                        const OipModel& m) {
  nlohmann::json j = {{"model_name", m.name}, {"model_version", "1"}};
  if (!req.id.empty()) j["id"] = req.id;
  nlohmann::json o = TensorJson(m.output_name, out.shape);
  OipReply r;
  const size_t bytes = out.data.size() * sizeof(float);
  if (req.binary_output) {
    o["parameters"] = {{"binary_data_size", bytes}};
  } else {
    o["data"] = out.data;
  }
  j["outputs"] = nlohmann::json::array({o});
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (req.binary_output) {
    r.header_length = static_cast<int64_t>(r.body.size());
    r.body.append(reinterpret_cast<const char*>(out.data.data()), bytes);
    r.content_type = "application/octet-stream";
  }
  return r;
}

}  // namespace shoal
