// shoal serve's HTTP inference API in this process: workers on free ports,
// the server with --http, and cpp-httplib and curl as clients. Health and
// metadata in the Open Inference Protocol, JSON and binary tensors answered
// with the single-device output, the image route's top classes, errors as
// JSON with their status, and every request counted with the gRPC ones.
#include "serve/http_api.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "io/image.h"
#include "io/image_metadata.h"
#include "models/load_model.h"
#include "onnx/onnx_metadata.h"
#include "runtime/runtime_test_util.h"
#include "serve/client.h"
#include "serve/server.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

// A PNG of w x h seeded gray pixels.
std::string Png(int w, int h, int seed) {
  std::vector<unsigned char> px(static_cast<size_t>(w) * h);
  for (size_t i = 0; i < px.size(); ++i) px[i] = (i * 37 + seed * 11) % 256;
  std::string out;
  stbi_write_png_to_func(
      [](void* ctx, void* data, int size) {
        static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size);
      },
      &out, w, h, 1, px.data(), w);
  return out;
}

// lenet5 served by `shoal serve --http` over two workers of this process.
struct HttpServe {
  testing::LocalWorkers workers{2};
  std::string dir;
  Model model;
  std::unique_ptr<Server> server;
  std::unique_ptr<httplib::Client> client;

  explicit HttpServe(const std::string& token = "",
                     const std::string& http_listen = "127.0.0.1:0",
                     const std::string& model_spec = "lenet5") {
    dir = fs::temp_directory_path() /
          ("shoal-http-api-test-" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream f(dir + "/cluster.yaml");
    f << "devices:\n";
    for (const auto& d : workers.cluster.devices) {
      f << "  - {name: " << d.name << ", address: " << d.address << "}\n";
    }
    f.close();
    ServeOptions o;
    o.cluster_file = dir + "/cluster.yaml";
    o.model.spec = model_spec;
    o.listen = "127.0.0.1:0";
    o.http_listen = http_listen;
    o.metrics_listen = "127.0.0.1:0";
    o.dashboard_listen = "127.0.0.1:0";
    o.strategy = "pipeline";
    o.rebalance = false;
    o.timeout_ms = 10000;
    o.log_every_s = 1000;
    if (!token.empty()) {
      o.http_token_file = dir + "/token";
      std::ofstream(o.http_token_file) << token << "\n";
    }
    auto s = Server::Start(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    if (s.ok()) server = std::move(s).value();
    LoadOptions lo;
    lo.with_weights = true;
    lo.fuse_batchnorm = true;
    model = LoadModel(model_spec, lo).value();
    client = std::make_unique<httplib::Client>("127.0.0.1", http_port());
    client->set_read_timeout(20);
  }
  ~HttpServe() {
    client.reset();
    server.reset();
    fs::remove_all(dir);
  }
  int http_port() const { return server ? server->http_port() : 0; }
  Shape input_shape() const {
    return model.graph.tensors.at(model.graph.inputs[0]).shape;
  }
  // The infer request's JSON header for `x`, data inline or binary.
  std::string InferJson(const Tensor& x, bool binary) const {
    nlohmann::json in = {{"name", model.graph.inputs[0]},
                         {"datatype", "FP32"},
                         {"shape", x.shape}};
    nlohmann::json j = {{"id", "t1"}};
    if (binary) {
      in["parameters"] = {{"binary_data_size", x.data.size() * 4}};
      j["parameters"] = {{"binary_data_output", true}};
    } else {
      in["data"] = x.data;
    }
    j["inputs"] = {in};
    return j.dump();
  }
};

nlohmann::json Body(const httplib::Result& r) {
  return nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

TEST(HttpApi, HealthAndMetadata) {
  HttpServe s;
  ASSERT_TRUE(s.server);
  auto r = s.client->Get("/v2/health/live");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = s.client->Get("/v2/health/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["ready"], true);
  r = s.client->Get("/v2");
  ASSERT_TRUE(r);
  EXPECT_EQ(Body(r)["extensions"], nlohmann::json({"binary_tensor_data"}));
  r = s.client->Get("/v2/models/lenet5");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const auto meta = Body(r);
  EXPECT_EQ(meta["name"], "lenet5");
  EXPECT_EQ(meta["inputs"][0]["datatype"], "FP32");
  EXPECT_EQ(meta["inputs"][0]["shape"], nlohmann::json(s.input_shape()));
  EXPECT_EQ(meta["outputs"][0]["shape"], nlohmann::json({1, 10}));
  r = s.client->Get("/v2/models/lenet5/versions/1/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = s.client->Get("/v2/models/resnet18");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(Body(r)["error"].get<std::string>().find("serves 'lenet5'"),
            std::string::npos)
      << r->body;
  r = s.client->Get("/v2/models/lenet5/versions/2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

TEST(HttpApi, InferJsonAndBinaryLikeOneDevice) {
  HttpServe s;
  ASSERT_TRUE(s.server);
  const Tensor x = RandomInput(s.input_shape(), 7);
  const Tensor want = testing::RunWholeOrFail(s.model, x);

  auto r = s.client->Post("/v2/models/lenet5/infer", s.InferJson(x, false),
                          "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto j = Body(r);
  EXPECT_EQ(j["id"], "t1");
  EXPECT_EQ(j["model_name"], "lenet5");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({1, 10}));
  const Tensor got({1, 10}, j["outputs"][0]["data"].get<std::vector<float>>());
  EXPECT_LE(MaxRelDiff(got, want), 1e-4);

  std::string body = s.InferJson(x, true);
  const size_t header = body.size();
  body.append(reinterpret_cast<const char*>(x.data.data()), x.data.size() * 4);
  r = s.client->Post("/v2/models/lenet5/versions/1/infer",
                     httplib::Headers{{"Inference-Header-Content-Length",
                                       std::to_string(header)}},
                     body, "application/octet-stream");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const size_t out_header =
      std::stoul(r->get_header_value("Inference-Header-Content-Length"));
  const auto jb = nlohmann::json::parse(r->body.substr(0, out_header));
  EXPECT_EQ(jb["outputs"][0]["parameters"]["binary_data_size"], 40);
  ASSERT_EQ(r->body.size(), out_header + 40);
  Tensor bin({1, 10});
  std::memcpy(bin.data.data(), r->body.data() + out_header, 40);
  EXPECT_LE(MaxRelDiff(bin, want), 1e-4);

  // The gRPC service answers beside it; both are counted together.
  auto g = ServeClient("127.0.0.1:" + std::to_string(s.server->port()))
               .Infer(x, 10000);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_LE(MaxRelDiff(g->output, want), 1e-4);
  const auto st = s.server->Snapshot();
  EXPECT_EQ(st.answered(), 3);
  EXPECT_EQ(st.failed(), 0);
}

TEST(HttpApi, BadRequestsAreJsonErrors) {
  HttpServe s;
  ASSERT_TRUE(s.server);
  auto r = s.client->Post("/v2/models/lenet5/infer", "{\"inputs\": [",
                          "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(Body(r).contains("error")) << r->body;
  const Tensor wrong = RandomInput({1, 1, 32, 32}, 1);
  r = s.client->Post("/v2/models/lenet5/infer", s.InferJson(wrong, false),
                     "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(Body(r)["error"].get<std::string>().find("expects 1x1x28x28"),
            std::string::npos)
      << r->body;
  r = s.client->Post("/v2/models/lenet5/infer",
                     httplib::Headers{{"Inference-Header-Content-Length", "x"}},
                     "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  r = s.client->Post("/v2/models/other/infer", s.InferJson(wrong, false),
                     "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  r = s.client->Post("/v1/models/lenet5/classify", "not an image", "image/png");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(Body(r)["error"].get<std::string>().find("cannot read image"),
            std::string::npos)
      << r->body;
  r = s.client->Post("/v1/models/lenet5/classify", "", "image/png");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  r = s.client->Post("/v1/models/lenet5/classify?top_k=11", Png(28, 28, 1),
                     "image/png");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  // Over --http-max-body (16 MiB): refused before it is read.
  r = s.client->Post("/v1/models/lenet5/classify",
                     std::string((16 << 20) + 1, 'x'), "image/png");
  if (r) {
    EXPECT_EQ(r->status, 413);
  }
  // Counted as the gRPC service counts a bad input: failed, none answered.
  const auto st = s.server->Snapshot();
  EXPECT_EQ(st.answered(), 0);
  EXPECT_EQ(st.failed(), 3);  // the three that reached serve's request path
}

TEST(HttpApi, ClassifyAnImage) {
  HttpServe s;
  ASSERT_TRUE(s.server);
  const std::string png = Png(40, 30, 3);
  auto x = DecodeImage(png, "png", s.input_shape(), DefaultNormalization(1));
  ASSERT_TRUE(x.ok()) << x.status().message();
  const Tensor want = testing::RunWholeOrFail(s.model, *x);
  const size_t best =
      std::max_element(want.data.begin(), want.data.end()) - want.data.begin();
  auto r =
      s.client->Post("/v1/models/lenet5/classify?top_k=3", png, "image/png");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto j = Body(r);
  ASSERT_EQ(j["classes"].size(), 3u);
  EXPECT_EQ(j["classes"][0]["index"], best);
  EXPECT_NEAR(j["classes"][0]["score"].get<double>(), want.data[best],
              1e-4 * std::max(1.f, std::abs(want.data[best])));
  EXPECT_FALSE(j["classes"][0].contains("name"));  // lenet5 has no names
  EXPECT_NE(j["note"].get<std::string>().find("random weights"),
            std::string::npos);
  // The dashboard's form: the same answer from the dashboard's server.
  httplib::Client dash("127.0.0.1", s.server->dashboard_port());
  dash.set_read_timeout(20);
  r = dash.Post("/api/classify?top_k=3", png, "application/octet-stream");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["classes"], j["classes"]);
  r = dash.Get("/");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("id=\"classify-form\""), std::string::npos);
  EXPECT_EQ(s.server->Snapshot().answered(), 2);
}

// A model file that names its classes and states its input normalization
// (a trained model's, docs/models.md): the image route answers with its
// names, the image normalised its way, and no note of random weights.
TEST(HttpApi, ClassifyWithTheModelsOwnNamesAndNormalization) {
  const std::string dir = fs::temp_directory_path() /
                          ("shoal-http-api-named-" + std::to_string(getpid()));
  fs::create_directories(dir);
  LoadOptions lo;
  lo.with_weights = true;
  lo.seed = 5;
  const Model m = LoadModel("lenet5", lo).value();
  ModelMetadata md;
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) names.push_back("class " + std::to_string(i));
  SetClassNames(names, &md);
  ImageNormalization norm;
  norm.mean = {0.25f};
  norm.std = {2.f};
  SetImageNormalization(norm, &md);
  ASSERT_TRUE(ExportOnnxWithMetadata(m, md, dir + "/named.onnx").ok());
  {
    HttpServe s("", "127.0.0.1:0", dir + "/named.onnx");
    ASSERT_TRUE(s.server);
    const std::string png = Png(28, 28, 4);
    auto x = DecodeImage(png, "png", s.input_shape(), norm);
    ASSERT_TRUE(x.ok()) << x.status().message();
    const Tensor want = testing::RunWholeOrFail(s.model, *x);
    const size_t best = std::max_element(want.data.begin(), want.data.end()) -
                        want.data.begin();
    auto r =
        s.client->Post("/v1/models/named/classify?top_k=2", png, "image/png");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const auto j = Body(r);
    ASSERT_EQ(j["classes"].size(), 2u) << r->body;
    EXPECT_EQ(j["classes"][0]["index"], best);
    EXPECT_EQ(j["classes"][0]["name"], names[best]);
    EXPECT_NEAR(j["classes"][0]["score"].get<double>(), want.data[best],
                1e-4 * std::max(1.f, std::abs(want.data[best])));
    EXPECT_FALSE(j.contains("note")) << r->body;
  }
  fs::remove_all(dir);
}

TEST(HttpApi, WarnsOfPlainTextBeyondLoopback) {
  ::testing::internal::CaptureStderr();
  {
    HttpServe s("", "0.0.0.0:0");
    ASSERT_TRUE(s.server);
  }
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("WARN serve: --http 0.0.0.0:0 listens beyond this "
                     "machine in plain text"),
            std::string::npos)
      << log;
  ::testing::internal::CaptureStderr();
  {
    HttpServe s;
    ASSERT_TRUE(s.server);
  }
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("WARN"), std::string::npos) << log;
}

// Runs `cmd`, returning its standard output.
std::string Shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(HttpApi, Curl) {
  if (access("/usr/bin/curl", X_OK) != 0) {
    GTEST_SKIP() << "no /usr/bin/curl (scripts/install-deps.sh "
                    "--with-test-deps installs it)";
  }
  HttpServe s("0123456789abcdef-token");
  ASSERT_TRUE(s.server);
  const std::string png = s.dir + "/digit.png";
  std::ofstream(png, std::ios::binary) << Png(28, 28, 5);
  const std::string base = "http://127.0.0.1:" + std::to_string(s.http_port());
  const std::string auth =
      " -H 'Authorization: Bearer 0123456789abcdef-token' ";
  // Without the token: 401, the body never sent to the model.
  std::string out = Shell("curl -s -m 20 -w ' %{http_code}' --data-binary @" +
                          png + " " + base + "/v1/models/lenet5/classify");
  EXPECT_NE(out.find(" 401"), std::string::npos) << out;
  out = Shell("curl -s -m 20" + auth + "--data-binary @" + png + " '" + base +
              "/v1/models/lenet5/classify?top_k=2'");
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j["classes"].size(), 2u) << out;
  const Tensor x = RandomInput(s.input_shape(), 3);
  const std::string req = s.dir + "/req.json";
  std::ofstream(req) << s.InferJson(x, false);
  out = Shell("curl -s -m 20" + auth +
              "-H 'Content-Type: application/json' -d @" + req + " " + base +
              "/v2/models/lenet5/infer");
  const auto y = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(y.is_object()) << out;
  const Tensor got({1, 10}, y["outputs"][0]["data"].get<std::vector<float>>());
  EXPECT_LE(MaxRelDiff(got, testing::RunWholeOrFail(s.model, x)), 1e-4);
  // The metrics endpoint is under the same token.
  const std::string metrics =
      "http://127.0.0.1:" + std::to_string(s.server->metrics_port()) +
      "/metrics";
  out = Shell("curl -s -m 20 -o /dev/null -w '%{http_code}' " + metrics);
  EXPECT_EQ(out, "401");
  out = Shell("curl -s -m 20" + auth + metrics);
  EXPECT_NE(out.find("shoal_serve_requests_total{outcome=\"answered\"} 2"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace shoal
