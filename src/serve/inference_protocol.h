// The Open Inference Protocol (KServe v2) over HTTP, as `shoal serve
// --http` speaks it (docs/serve.md): model metadata, and an inference
// request and its answer in JSON or with the binary tensor data extension
// (the JSON header first, its length in the Inference-Header-Content-Length
// header, then each binary tensor's bytes: little-endian, row-major). Pure
// functions of bytes; the routes are in serve/http_api.h.
#ifndef SHOAL_SERVE_INFERENCE_PROTOCOL_H_
#define SHOAL_SERVE_INFERENCE_PROTOCOL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// A model as the protocol describes it: one FP32 input and one output.
struct OipModel {
  std::string name;
  std::string input_name, output_name;
  Shape input_shape, output_shape;
};

// GET /v2/models/{name}: {"name", "versions", "platform", "inputs",
// "outputs"}, each tensor with "name", "datatype" "FP32" and "shape".
nlohmann::json ModelMetadataJson(const OipModel& m);

struct OipRequest {
  std::string id;      // echoed in the answer; "" when none
  Tensor input;        // checked against the model's input shape
  bool binary_output;  // answer with the binary tensor data extension
};

// The most elements one request's input may hold (the model's input is
// far below): a request cannot make the server build more.
constexpr int64_t kMaxRequestElements = int64_t{1} << 26;
// Enough for any float32 written in full ("-1.17549435082228751e-38,").
constexpr int64_t kMaxJsonBytesPerValue = 32;

// The request in `body` for model `m`. `header_length` is the value of
// Inference-Header-Content-Length (nullopt: the whole body is JSON). Errors
// (kInvalidArgument) name the field at fault. The JSON may hold at most
// kMaxJsonBytesPerValue bytes per input value (plus 64 KiB), checked
// before it is parsed: a parsed number takes 16 bytes, and a request
// could otherwise make the server hold 8 times its body.
StatusOr<OipRequest> ParseInferRequest(std::string_view body,
                                       std::optional<int64_t> header_length,
                                       const OipModel& m);

struct OipReply {
  std::string body;
  // >= 0: the binary extension, the JSON header's length (to send as
  // Inference-Header-Content-Length); -1: all JSON.
  int64_t header_length = -1;
  std::string content_type = "application/json";
};

// The answer to `req`: {"model_name", "id", "outputs": [{"name", "shape",
// "datatype", "data"}]}, the output as binary data where asked.
OipReply MakeInferReply(const OipRequest& req, const Tensor& out,
                        const OipModel& m);

}  // namespace shoal

#endif  // SHOAL_SERVE_INFERENCE_PROTOCOL_H_
