// shoal serve with a tls block in its cluster file serves its HTTP
// endpoints (the inference API, metrics, dashboard) over HTTPS with the
// coordinator certificate, and answers only a client showing a coordinator
// certificate of the cluster CA or the bearer token; plain HTTP gets no
// answer at all.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "runtime/worker.h"
#include "security/certs_test_util.h"
#include "security/openssl_util.h"
#include "serve/server.h"

namespace shoal {
namespace {

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

TEST(HttpApiTls, HttpsWithCertificatesOrTheToken) {
  testing::TempCa ca;
  std::vector<std::unique_ptr<Worker>> workers;
  std::string yaml = "tls: {dir: " + ca.dir + "}\ndevices:\n";
  for (int i = 0; i < 2; ++i) {
    WorkerOptions o;
    o.name = "dev" + std::to_string(i);
    o.tls = ca.Issue(o.name, TlsRole::kDevice);
    auto w = Worker::Start(o);
    ASSERT_TRUE(w.ok()) << w.status().message();
    yaml += "  - {name: " + o.name +
            ", address: 127.0.0.1:" + std::to_string(w.value()->port()) + "}\n";
    workers.push_back(std::move(w).value());
  }
  auto coordinator = ca.Issue("coordinator", TlsRole::kCoordinator);
  auto laptop = ca.Issue("laptop", TlsRole::kCoordinator);
  auto device = ca.Issue("dev9", TlsRole::kDevice);
  ASSERT_TRUE(coordinator && laptop && device);
  std::ofstream(ca.dir + "/cluster.yaml") << yaml;
  std::ofstream(ca.dir + "/token") << "0123456789abcdef-token\n";
  ServeOptions so;
  so.cluster_file = ca.dir + "/cluster.yaml";
  so.model.spec = "lenet5";
  so.listen = "127.0.0.1:0";
  so.http_listen = "127.0.0.1:0";
  so.metrics_listen = "127.0.0.1:0";
  so.dashboard_listen = "127.0.0.1:0";
  so.http_token_file = ca.dir + "/token";
  so.strategy = "pipeline";
  so.rebalance = false;
  so.log_every_s = 1000;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().message();
  Server& s = **server;

  for (int port : {s.http_port(), s.metrics_port(), s.dashboard_port()}) {
    SCOPED_TRACE("port " + std::to_string(port));
    httplib::Client plain("127.0.0.1", port);
    plain.set_read_timeout(3);
    EXPECT_FALSE(plain.Get("/v2/health/ready"));  // no handshake, no answer

    httplib::SSLClient anonymous("127.0.0.1", port);
    anonymous.enable_server_certificate_verification(false);
    anonymous.set_read_timeout(3);
    auto r = anonymous.Get("/metrics");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);

    auto cert = ParseCertPem(device->cert_pem, "cert");
    auto key = ParseKeyPem(device->key_pem, "key");
    httplib::SSLClient as_device("127.0.0.1", port, cert->get(), key->get());
    as_device.enable_server_certificate_verification(false);
    r = as_device.Get("/metrics");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);
  }
  httplib::SSLClient with_token("127.0.0.1", s.metrics_port());
  with_token.enable_server_certificate_verification(false);
  with_token.set_bearer_token_auth("0123456789abcdef-token");
  auto r = with_token.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);

  if (access("/usr/bin/curl", X_OK) != 0) {
    GTEST_SKIP() << "no /usr/bin/curl (scripts/install-deps.sh "
                    "--with-test-deps installs it)";
  }
  // curl verifies serve's certificate against the cluster CA by its role
  // name, as shoal's own clients do, and shows a coordinator certificate.
  const std::string port = std::to_string(s.http_port());
  const std::string curl = "curl -s -m 20 --cacert " + ca.dir +
                           "/ca.crt --resolve "
                           "shoal-coordinator:" +
                           port + ":127.0.0.1 ";
  const std::string url = "https://shoal-coordinator:" + port;
  std::string out = Shell(curl + "--cert " + ca.dir + "/laptop.crt --key " +
                          ca.dir + "/laptop.key " + url + "/v2/models/lenet5");
  EXPECT_NE(out.find("\"name\":\"lenet5\""), std::string::npos) << out;
  out = Shell(curl + "-o /dev/null -w '%{http_code}' " + url +
              "/v2/models/lenet5");
  EXPECT_EQ(out, "401");
  out = Shell(curl + "-H 'Authorization: Bearer 0123456789abcdef-token' " +
              url + "/v2/health/ready");
  EXPECT_EQ(out, "{\"ready\":true}");
  // Plain HTTP to the HTTPS port: curl gets no HTTP answer.
  out = Shell("curl -s -m 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:" +
              port + "/v2/health/ready");
  EXPECT_EQ(out, "000");
  s.Shutdown();
}

}  // namespace
}  // namespace shoal
