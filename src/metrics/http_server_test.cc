// The bounded HTTP server of --metrics and --dashboard: pages, 404, a body
// over the bound refused, a taken port named, a failing page answered 500,
// and idle connections that cannot keep others out for long.
#include "metrics/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

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
  if (r) EXPECT_EQ(r->status, 413);
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

}  // namespace
}  // namespace shoal
