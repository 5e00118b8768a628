// The HTTP inference API of `shoal serve --http` (docs/serve.md): the Open
// Inference Protocol (KServe v2: health, server and model metadata, infer
// with JSON or binary tensor data) and a plain image route, POST
// /v1/models/{name}/classify, that answers a JPEG or PNG with the top-k
// classes. Every request runs through `run`, serve's one request path (the
// queue, retries and counters the gRPC Infer uses).
#ifndef SHOAL_SERVE_HTTP_API_H_
#define SHOAL_SERVE_HTTP_API_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/pixels.h"
#include "metrics/http_server.h"
#include "serve/inference_protocol.h"
#include "util/status.h"

namespace shoal {

struct HttpApi {
  OipModel model;
  // The names of the output's classes (serve/classify.h); empty: none.
  std::vector<std::string> class_names;
  // How the image route turns pixels into the input: the model's own
  // (its metadata), else ImageNet's (io/pixels.h).
  ImageNormalization normalization;
  bool random_weights = false;  // a zoo model: said in classify's answer
  // Whether a plan is deployed and requests are taken.
  std::function<bool()> ready;
  // One request through serve: `input` makes the tensor (its error is the
  // request's, counted as serve counts a bad gRPC input); `client` names
  // the caller in the log.
  std::function<StatusOr<Tensor>(const std::function<StatusOr<Tensor>()>& input,
                                 const std::string& client)>
      run;
};

// The routes, for HttpServer::Start.
std::vector<HttpRoute> HttpApiRoutes(std::shared_ptr<const HttpApi> api);

// The dashboard's form (serve/dashboard/): POST /api/classify?top_k=K,
// the image route of the model served, on the dashboard's own server (its
// page may not call another origin).
HttpRoute DashboardClassifyRoute(std::shared_ptr<const HttpApi> api);

// The HTTP status of a failed request: 400 a bad input, 404 no such model,
// 503 no plan or a device that failed twice, 504 the deadline, 500 else.
int HttpStatusOf(const Status& s);

}  // namespace shoal

#endif  // SHOAL_SERVE_HTTP_API_H_
