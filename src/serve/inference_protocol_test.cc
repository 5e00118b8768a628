// The Open Inference Protocol's request and answer: JSON tensors flat or
// nested, the binary tensor data extension both ways, and every malformed
// request refused naming what is wrong.
#include "serve/inference_protocol.h"

#include <gtest/gtest.h>

#include <cstring>

namespace shoal {
namespace {

OipModel Model() {
  OipModel m;
  m.name = "tiny";
  m.input_name = "x";
  m.output_name = "y";
  m.input_shape = {1, 2, 3};
  m.output_shape = {1, 2};
  return m;
}

std::string Request(const std::string& data,
                    const std::string& shape = "[1,2,3]",
                    const std::string& extra = "") {
  return R"({"id":"r1","inputs":[{"name":"x","datatype":"FP32","shape":)" +
         shape + R"(,"data":)" + data + "}]" + extra + "}";
}

std::string Error(const std::string& body,
                  std::optional<int64_t> header = std::nullopt) {
  auto r = ParseInferRequest(body, header, Model());
  EXPECT_FALSE(r.ok()) << body;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  return r.status().message();
}

TEST(InferenceProtocol, JsonTensorsFlatOrNested) {
  for (const std::string data : {"[1,2,3,4,5,6.5]", "[[[1,2,3],[4,5,6.5]]]"}) {
    auto r = ParseInferRequest(Request(data), std::nullopt, Model());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->id, "r1");
    EXPECT_EQ(r->input.shape, (Shape{1, 2, 3}));
    EXPECT_EQ(r->input.data, (std::vector<float>{1, 2, 3, 4, 5, 6.5f}));
    EXPECT_FALSE(r->binary_output);
  }
}

TEST(InferenceProtocol, BinaryTensorDataBothWays) {
  const std::string header =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2,3],)"
      R"("parameters":{"binary_data_size":24}}],)"
      R"("outputs":[{"name":"y","parameters":{"binary_data":true}}]})";
  const float values[6] = {1, -2, 3, 4.25f, 5, 6};
  std::string body = header;
  body.append(reinterpret_cast<const char*>(values), sizeof(values));
  auto r = ParseInferRequest(body, header.size(), Model());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->input.data, std::vector<float>(values, values + 6));
  EXPECT_TRUE(r->binary_output);

  const Tensor out({1, 2}, {0.5f, -7});
  const OipReply rep = MakeInferReply(*r, out, Model());
  ASSERT_GT(rep.header_length, 0);
  EXPECT_EQ(rep.content_type, "application/octet-stream");
  auto j = nlohmann::json::parse(rep.body.substr(0, rep.header_length));
  EXPECT_EQ(j["model_name"], "tiny");
  EXPECT_EQ(j["outputs"][0]["name"], "y");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({1, 2}));
  EXPECT_EQ(j["outputs"][0]["parameters"]["binary_data_size"], 8);
  ASSERT_EQ(rep.body.size(), static_cast<size_t>(rep.header_length) + 8);
  float got[2];
  std::memcpy(got, rep.body.data() + rep.header_length, 8);
  EXPECT_EQ(got[0], 0.5f);
  EXPECT_EQ(got[1], -7.f);
}

TEST(InferenceProtocol, JsonAnswer) {
  auto r = ParseInferRequest(Request("[1,2,3,4,5,6]"), std::nullopt, Model());
  ASSERT_TRUE(r.ok());
  const OipReply rep = MakeInferReply(*r, Tensor({1, 2}, {0.5f, -7}), Model());
  EXPECT_EQ(rep.header_length, -1);
  auto j = nlohmann::json::parse(rep.body);
  EXPECT_EQ(j["id"], "r1");
  EXPECT_EQ(j["outputs"][0]["datatype"], "FP32");
  EXPECT_EQ(j["outputs"][0]["data"], nlohmann::json({0.5, -7.0}));
}

TEST(InferenceProtocol, RefusesMalformedRequests) {
  EXPECT_NE(Error("[1,2").find("the request"), std::string::npos);
  EXPECT_NE(Error("[]").find("JSON object"), std::string::npos);
  EXPECT_NE(Error(R"({"inputs":[]})").find("one input, 'x'"),
            std::string::npos);
  EXPECT_NE(Error(Request("[1,2,3,4,5,6]", "[1,3,2]")).find("expects 1x2x3"),
            std::string::npos)
      << Error(Request("[1,2,3,4,5,6]", "[1,3,2]"));
  EXPECT_NE(Error(Request("[1,2,3,4,5]")).find("holds 5 values"),
            std::string::npos);
  EXPECT_NE(Error(Request("[1,2,3,4,5,6,7]")).find("more than the 6"),
            std::string::npos);
  EXPECT_NE(Error(Request("[1,2,3,4,5,\"a\"]")).find("not a number"),
            std::string::npos);
  EXPECT_NE(Error(Request("[1,2,3,4,5,6]", "[1,-2,3]")).find("non-negative"),
            std::string::npos);
  EXPECT_NE(Error(Request("[1]", "[1000000,1000000,1000]")).find("more than"),
            std::string::npos);
  std::string wrong_type = Request("[1,2,3,4,5,6]");
  wrong_type.replace(wrong_type.find("FP32"), 4, "INT8");
  EXPECT_NE(Error(wrong_type).find("\"FP32\""), std::string::npos);
  std::string wrong_name = Request("[1,2,3,4,5,6]");
  wrong_name.replace(wrong_name.find("\"x\""), 3, "\"z\"");
  EXPECT_NE(Error(wrong_name).find("named 'z'"), std::string::npos);
  EXPECT_NE(
      Error(Request("[1,2,3,4,5,6]", "[1,2,3]", R"(,"outputs":[{"name":"w"}])"))
          .find("one output, 'y'"),
      std::string::npos);
  // Nested 30 000 deep (within the size bound): refused while parsing,
  // not walked.
  EXPECT_NE(Error(Request(std::string(30000, '[') + std::string(30000, ']')))
                .find("nest"),
            std::string::npos);
  // JSON larger than its values can take is refused before it is parsed.
  std::string zeros = "[0";
  for (int i = 0; i < 40000; ++i) zeros += ",0";
  EXPECT_NE(Error(Request(zeros + "]")).find("send a large tensor as binary"),
            std::string::npos);
  // The binary extension: a header length beyond the body, sizes that do
  // not add up, binary data without the header.
  const std::string bin_header =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2,3],)"
      R"("parameters":{"binary_data_size":24}}]})";
  EXPECT_NE(Error(bin_header, 1000).find("holds"), std::string::npos);
  EXPECT_NE(Error(bin_header + std::string(20, 'a'), bin_header.size())
                .find("20 bytes of binary data"),
            std::string::npos);
  EXPECT_NE(Error(bin_header + std::string(24, 'a')).find("the request"),
            std::string::npos);
  EXPECT_NE(Error(bin_header).find("no Inference-Header-Content-Length"),
            std::string::npos);
  const std::string json = Request("[1,2,3,4,5,6]");
  EXPECT_NE(Error(json + "abcd", json.size()).find("no input has"),
            std::string::npos);
}

TEST(InferenceProtocol, Metadata) {
  const auto j = ModelMetadataJson(Model());
  EXPECT_EQ(j["name"], "tiny");
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["inputs"][0]["datatype"], "FP32");
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({1, 2}));
}

}  // namespace
}  // namespace shoal
