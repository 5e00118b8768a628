// The bounded HTTP server of --metrics, --dashboard and --http: pages, 404
// and 405, a body over the bound refused, a taken port named, a failing
// page answered 500, idle connections that cannot keep others out for
// long; a bearer token and HTTPS with client certificates of the cluster
// CA, refusing everything else before a body is read.
#include "metrics/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "security/certs_test_util.h"
#include "security/openssl_util.h"

namespace shoal {
namespace {

std::map<std::string, HttpHandler> Routes() {
  return {{"/hello",
           [] {
             HttpReply r;
             r.body = "hi\n";
             return r;
           }},
          {"/broken",
           []() -> HttpReply { throw std::runtime_error("no page today"); }}};
}

TEST(HttpServer, ServesRoutesAnd404) {
  auto s = HttpServer::Start("127.0.0.1:0", "test", Routes());
  ASSERT_TRUE(s.ok()) << s.status().message();
  httplib::Client c("127.0.0.1", (*s)->port());
  c.set_connection_timeout(2);
  c.set_read_timeout(2);
  auto r = c.Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hi\n");
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-store");
  r = c.Get("/nothing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find("/nothing"), std::string::npos);
  r = c.Get("/broken");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("no page today"), std::string::npos);
}

TEST(HttpServer, RefusesALargeBody) {
  auto s = HttpServer::Start("127.0.0.1:0", "test", Routes());
  ASSERT_TRUE(s.ok()) << s.status().message();
  httplib::Client c("127.0.0.1", (*s)->port());
  c.set_read_timeout(2);
  auto r = c.Post("/hello", std::string(1 << 20, 'x'), "text/plain");
  // 413 or the connection closed mid-body: never read, never 200.
  if (r) {
    EXPECT_EQ(r->status, 413);
  }
}

TEST(HttpServer, NamesATakenPort) {
  auto a = HttpServer::Start("127.0.0.1:0", "first", Routes());
  ASSERT_TRUE(a.ok()) << a.status().message();
  const std::string addr = "127.0.0.1:" + std::to_string((*a)->port());
  auto b = HttpServer::Start(addr, "shoal serve --metrics", Routes());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kUnavailable);
  EXPECT_NE(
      b.status().message().find("shoal serve --metrics cannot listen on " +
                                addr + ": the port is taken"),
      std::string::npos)
      << b.status().message();
}

TEST(HttpServer, RefusesABadAddress) {
  for (const char* bad : {"9100", "127.0.0.1", "127.0.0.1:99999", ":9100"}) {
    auto s = HttpServer::Start(bad, "--metrics", Routes());
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_NE(s.status().message().find("--metrics"), std::string::npos)
          << s.status().message();
    }
  }
  auto s = HttpServer::Start("192.0.2.1:9100", "--metrics", Routes());
  ASSERT_FALSE(s.ok());  // TEST-NET-1: not an address of this machine
  EXPECT_NE(s.status().message().find("cannot listen on 192.0.2.1:9100"),
            std::string::npos)
      << s.status().message();
}

TEST(HttpServer, IdleConnectionsTimeOut) {
  HttpServerOptions o;
  o.threads = 2;
  o.io_timeout_ms = 300;
  auto s = HttpServer::Start("127.0.0.1:0", "test", Routes(), o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  // More silent connections than threads and queue together.
  std::vector<int> fds;
  for (int i = 0; i < 12; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons((*s)->port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    fds.push_back(fd);
  }
  const auto t0 = std::chrono::steady_clock::now();
  httplib::Client c("127.0.0.1", (*s)->port());
  c.set_read_timeout(20);
  auto r = c.Get("/hello");
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  // Each silent connection is dropped after 0.3 s, two at a time.
  EXPECT_LT(waited, 10.0);
  for (int fd : fds) close(fd);
}

// A POST route echoing its body's size, the model segment and a header.
std::vector<HttpRoute> PostRoutes() {
  return {{"POST", "/v2/models/{model}/infer",
           [](const HttpRequest& r) {
             HttpReply x;
             x.body = r.path_params.at("model") + " " +
                      std::to_string(r.body.size()) + " " + r.Header("x-k") +
                      " " + (r.query.count("q") ? r.query.at("q") : "");
             x.headers["X-Answer"] = "yes";
             return x;
           }},
          {"GET", "/hello", [](const HttpRequest&) {
             HttpReply x;
             x.body = "hi\n";
             return x;
           }}};
}

TEST(HttpServer, PostRoutesAndMethods) {
  HttpServerOptions o;
  o.max_body_bytes = 1 << 16;
  auto s = HttpServer::Start("127.0.0.1:0", "test", PostRoutes(), o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  httplib::Client c("127.0.0.1", (*s)->port());
  c.set_read_timeout(2);
  auto r = c.Post("/v2/models/lenet5/infer?q=7", httplib::Headers{{"X-K", "v"}},
                  std::string(1000, 'x'), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "lenet5 1000 v 7");
  EXPECT_EQ(r->get_header_value("X-Answer"), "yes");
  r = c.Get("/v2/models/lenet5/infer");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  EXPECT_NE(r->body.find("\"error\""), std::string::npos) << r->body;
  r = c.Post("/v2/models/lenet5/infer", std::string(1 << 17, 'x'),
             "application/json");
  if (r) {
    EXPECT_EQ(r->status, 413);
  }
  // A body of any size up to the bound, whatever its Content-Type says
  // (curl --data-binary sends a form's type).
  r = c.Post("/v2/models/m/infer", std::string(60000, 'x'),
             "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "m 60000  ");
  r = c.Post("/v2/models/m/infer", "--b\r\n",
             "multipart/form-data; boundary=b");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  httplib::Client c2("127.0.0.1", (*s)->port());
  r = c2.Get("/v2/models/" + std::string(2000, 'a'));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 414);
}

TEST(HttpServer, BearerTokenRequired) {
  HttpServerOptions o;
  o.bearer_token = "0123456789abcdef0123";
  o.max_body_bytes = 1 << 16;
  auto s = HttpServer::Start("127.0.0.1:0", "test", PostRoutes(), o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  httplib::Client c("127.0.0.1", (*s)->port());
  c.set_read_timeout(2);
  auto r = c.Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("bearer token"), std::string::npos) << r->body;
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer realm=\"shoal\"");
  // Refused before the body is read: the connection closes after the 401.
  r = c.Post("/v2/models/m/infer", std::string(1000, 'x'), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->get_header_value("Connection"), "close");
  c.set_bearer_token_auth("0123456789abcdef0124");
  r = c.Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("not the token"), std::string::npos) << r->body;
  c.set_bearer_token_auth("0123456789abcdef0123");
  r = c.Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Post("/v2/models/m/infer", std::string(1000, 'x'), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "m 1000  ");
}

// An HTTPS client showing `id`'s certificate (none: null). The server's
// certificate names a role, not 127.0.0.1: its name is not checked here.
std::unique_ptr<httplib::SSLClient> HttpsClient(int port,
                                                const TlsIdentity* id) {
  std::unique_ptr<httplib::SSLClient> c;
  if (id != nullptr) {
    auto cert = ParseCertPem(id->cert_pem, "cert");
    auto key = ParseKeyPem(id->key_pem, "key");
    c = std::make_unique<httplib::SSLClient>("127.0.0.1", port, cert->get(),
                                             key->get());
  } else {
    c = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
  }
  c->enable_server_certificate_verification(false);
  c->set_read_timeout(3);
  c->set_connection_timeout(3);
  return c;
}

TEST(HttpServer, HttpsTakesCoordinatorCertificatesOrTheToken) {
  testing::TempCa ca;
  auto server_id = ca.Issue("coordinator", TlsRole::kCoordinator);
  auto client_id = ca.Issue("laptop", TlsRole::kCoordinator);
  auto device_id = ca.Issue("pi0", TlsRole::kDevice);
  testing::TempCa other;
  auto stranger = other.Issue("laptop", TlsRole::kCoordinator);
  ASSERT_TRUE(server_id && client_id && device_id && stranger);
  HttpServerOptions o;
  o.tls = server_id;
  o.bearer_token = "0123456789abcdef0123";
  auto s = HttpServer::Start("127.0.0.1:0", "test", PostRoutes(), o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE((*s)->https());
  const int port = (*s)->port();

  // Plain HTTP: no answer at all (the handshake fails).
  httplib::Client plain("127.0.0.1", port);
  plain.set_read_timeout(2);
  EXPECT_FALSE(plain.Get("/hello"));

  auto r = HttpsClient(port, client_id.get())->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hi\n");

  r = HttpsClient(port, nullptr)->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("coordinator certificate"), std::string::npos)
      << r->body;

  r = HttpsClient(port, device_id.get())->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("'pi0' is a device certificate"), std::string::npos)
      << r->body;

  // Another CA's certificate fails the handshake.
  EXPECT_FALSE(HttpsClient(port, stranger.get())->Get("/hello"));

  auto with_token = HttpsClient(port, nullptr);
  with_token->set_bearer_token_auth("0123456789abcdef0123");
  r = with_token->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// A coordinator certificate on the CA's revocation list is refused, by a
// server already running when it was revoked.
TEST(HttpServer, HttpsRefusesARevokedCertificate) {
  testing::TempCa ca;
  ASSERT_TRUE(ca.Issue("old", TlsRole::kDevice));
  ASSERT_TRUE(RevokeCert(ca.dir, "old").ok());  // the list exists from now
  auto server_id = ca.Issue("coordinator", TlsRole::kCoordinator);
  auto laptop = ca.Issue("laptop", TlsRole::kCoordinator);
  ASSERT_TRUE(server_id && laptop && server_id->revoked);
  HttpServerOptions o;
  o.tls = server_id;
  auto s = HttpServer::Start("127.0.0.1:0", "test", PostRoutes(), o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = HttpsClient((*s)->port(), laptop.get())->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);

  ASSERT_TRUE(RevokeCert(ca.dir, "laptop").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  r = HttpsClient((*s)->port(), laptop.get())->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("'laptop' is revoked"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace shoal
