#include "serve/http_api.h"

#include <charconv>
#include <mutex>

#include "io/image.h"
#include "io/pixels.h"
#include "serve/classify.h"
#include "util/version.h"

namespace shoal {

namespace {

HttpReply Json(const nlohmann::json& j, int status = 200) {
  HttpReply r;
  r.status = status;
  r.content_type = "application/json";
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpReply Error(const Status& s) {
  return JsonError(HttpStatusOf(s), s.message());
}

// The model the path names, or why not: another name, or a version other
// than the one there is.
Status CheckModel(const HttpApi& api, const HttpRequest& req) {
  const std::string& name = req.path_params.at("model");
  if (name != api.model.name) {
    return NotFound("no model '" + name.substr(0, 80) +
                    "' here; this server serves '" + api.model.name + "'");
  }
  auto v = req.path_params.find("version");
  if (v != req.path_params.end() && v->second != "1") {
    return NotFound("model " + api.model.name + " has one version, 1, not '" +
                    v->second.substr(0, 20) + "'");
  }
  return Status::Ok();
}

StatusOr<int64_t> ParseInt(const std::string& text, const std::string& what) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end) {
    return InvalidArgument(what + " must be an integer, not '" +
                           text.substr(0, 40) + "'");
  }
  return v;
}

HttpReply Infer(const HttpApi& api, const HttpRequest& req) {
  if (auto s = CheckModel(api, req); !s.ok()) return Error(s);
  std::optional<int64_t> header_length;
  if (const std::string h = req.Header("inference-header-content-length");
      !h.empty()) {
    auto n = ParseInt(h, "Inference-Header-Content-Length");
    if (!n.ok()) return Error(n.status());
    header_length = *n;
  }
  OipRequest parsed;
  auto out = api.run(
      [&]() -> StatusOr<Tensor> {
        ASSIGN_OR_RETURN(parsed,
                         ParseInferRequest(req.body, header_length, api.model));
        return std::move(parsed.input);
      },
      "http " + req.remote);
  if (!out.ok()) return Error(out.status());
  OipReply rep = MakeInferReply(parsed, *out, api.model);
  HttpReply r;
  r.content_type = rep.content_type;
  r.body = std::move(rep.body);
  if (rep.header_length >= 0) {
    r.headers["Inference-Header-Content-Length"] =
        std::to_string(rep.header_length);
  }
  return r;
}

HttpReply Classify(const HttpApi& api, const HttpRequest& req) {
  if (auto s = CheckModel(api, req); !s.ok()) return Error(s);
  const Shape& shape = api.model.input_shape;
  if (shape.size() != 4 || shape[0] != 1 || (shape[1] != 1 && shape[1] != 3)) {
    return Error(InvalidArgument(
        "model " + api.model.name + " takes " + ShapeToString(shape) +
        ", not an image [1, 1 or 3, H, W]: send a tensor to /v2/models/" +
        api.model.name + "/infer"));
  }
  int64_t k = 5;
  if (auto it = req.query.find("top_k"); it != req.query.end()) {
    auto v = ParseInt(it->second, "top_k");
    if (!v.ok()) return Error(v.status());
    if (*v < 1 || *v > NumElements(api.model.output_shape)) {
      return Error(
          InvalidArgument("top_k must be between 1 and " +
                          std::to_string(NumElements(api.model.output_shape)) +
                          " (the model's classes), not " + std::to_string(*v)));
    }
    k = *v;
  }
  if (req.body.empty()) {
    return Error(InvalidArgument(
        "the request body is empty: send the image's bytes (JPEG, PNG or "
        "BMP), e.g. curl --data-binary @photo.jpg"));
  }
  auto out = api.run(
      [&]() -> StatusOr<Tensor> {
        // One decode at a time: each may take up to the decoder's bound
        // (io/image.h), and the server's threads together must not.
        static std::mutex decoding;
        std::lock_guard<std::mutex> lock(decoding);
        const ImageNormalization& norm =
            api.normalization.mean.size() == static_cast<size_t>(shape[1])
                ? api.normalization
                : DefaultNormalization(shape[1]);
        return DecodeImage(std::string(req.body), "the request body", shape,
                           norm);
      },
      "http " + req.remote);
  if (!out.ok()) return Error(out.status());
  auto top = TopClasses(*out, static_cast<int>(k), api.class_names);
  if (!top.ok()) return Error(top.status());
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& c : *top) {
    nlohmann::json e = {{"index", c.index}, {"score", c.score}};
    if (!c.name.empty()) e["name"] = c.name;
    classes.push_back(e);
  }
  nlohmann::json j = {{"model_name", api.model.name}, {"classes", classes}};
  if (api.random_weights) {
    j["note"] = api.model.name +
                " has seeded random weights, not trained ones: these classes "
                "mean nothing";
  }
  return Json(j);
}

HttpReply Ready(const HttpApi& api) {
  const bool ready = api.ready();
  return Json({{"ready", ready}}, ready ? 200 : 503);
}

}  // namespace

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case Code::kOk:
      return 200;
    case Code::kInvalidArgument:
    case Code::kUnsupported:
      return 400;
    case Code::kNotFound:
      return 404;
    case Code::kUnavailable:
    case Code::kFailedPrecondition:
    case Code::kResourceExhausted:
      return 503;
    case Code::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::vector<HttpRoute> HttpApiRoutes(std::shared_ptr<const HttpApi> api) {
  std::vector<HttpRoute> r;
  auto get =
      [&](const std::string& pattern,
          std::function<HttpReply(const HttpApi&, const HttpRequest&)> f) {
        r.push_back({"GET", pattern,
                     [api, f](const HttpRequest& q) { return f(*api, q); }});
      };
  auto post = [&](const std::string& pattern,
                  HttpReply (*f)(const HttpApi&, const HttpRequest&)) {
    r.push_back({"POST", pattern,
                 [api, f](const HttpRequest& q) { return f(*api, q); }});
  };
  get("/v2", [](const HttpApi&, const HttpRequest&) {
    return Json({{"name", "shoal"},
                 {"version", kShoalVersion},
                 {"extensions", {"binary_tensor_data"}}});
  });
  get("/v2/health/live", [](const HttpApi&, const HttpRequest&) {
    return Json({{"live", true}});
  });
  get("/v2/health/ready",
      [](const HttpApi& a, const HttpRequest&) { return Ready(a); });
  for (const std::string base :
       {"/v2/models/{model}", "/v2/models/{model}/versions/{version}"}) {
    get(base, [](const HttpApi& a, const HttpRequest& q) {
      if (auto s = CheckModel(a, q); !s.ok()) return Error(s);
      return Json(ModelMetadataJson(a.model));
    });
    get(base + "/ready", [](const HttpApi& a, const HttpRequest& q) {
      if (auto s = CheckModel(a, q); !s.ok()) return Error(s);
      return Ready(a);
    });
    post(base + "/infer", &Infer);
  }
  post("/v1/models/{model}/classify", &Classify);
  return r;
}

HttpRoute DashboardClassifyRoute(std::shared_ptr<const HttpApi> api) {
  return {"POST", "/api/classify", [api](const HttpRequest& q) {
            HttpRequest named = q;
            named.path_params["model"] = api->model.name;
            return Classify(*api, named);
          }};
}

}  // namespace shoal
