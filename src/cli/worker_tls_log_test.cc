// `shoal worker` with TLS, as a device runs it, probed by a stranger that
// connects again and again without TLS: each failed handshake is counted
// on the metrics endpoint, and the log gets one line for them, not one
// each (a port scanner once filled it). The metrics endpoint is HTTPS
// itself, answering coordinator certificates only.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;
using onnx_test::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The port after `what` in the worker's log, once it is there (-1 after
// ten seconds).
int WaitForPort(const std::string& log, const std::string& what) {
  const std::regex re(what + " ([0-9]+)");
  for (int i = 0; i < 100; ++i) {
    std::smatch m;
    const std::string text = ReadAll(log);
    if (std::regex_search(text, m, re)) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

// A plaintext HTTP request to a TLS port: the handshake fails.
void KnockWithoutTls(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const char req[] = "GET / HTTP/1.0\r\n\r\n";
    (void)!write(fd, req, sizeof req - 1);
    char buf[256];
    (void)!read(fd, buf, sizeof buf);  // until the worker closes it
  }
  close(fd);
}

TEST(WorkerTlsLog, FailedHandshakesAreCountedAndLoggedOnce) {
  TempDir dir;
  const std::string shoal = SHOAL_BINARY, certs = dir.File("certs"),
                    log = dir.File("worker.log"), pid = dir.File("pid");
  std::string out;
  ASSERT_EQ(
      RunCommand(shoal + " certs init " + certs + " && " + shoal +
                     " certs issue d0 --dir " + certs + " && " + shoal +
                     " certs issue monitor --role coordinator --dir " + certs,
                 &out),
      0)
      << out;
  ASSERT_EQ(RunCommand("(" + shoal +
                           " worker --name d0 --listen "
                           "127.0.0.1:0 --metrics 127.0.0.1:0 --cache-dir " +
                           dir.File("cache") + " --tls-ca " + certs +
                           "/ca.crt --tls-cert " + certs +
                           "/d0.crt --tls-key " + certs + "/d0.key > " + log +
                           " 2>&1 & echo $! > " + pid + ")",
                       &out),
            0)
      << out;
  const int port = WaitForPort(log, "listening on port");
  const int metrics = WaitForPort(log, "metrics on port");
  ASSERT_GT(port, 0) << ReadAll(log);
  ASSERT_GT(metrics, 0) << ReadAll(log);
  constexpr int kKnocks = 12;
  for (int i = 0; i < kKnocks; ++i) KnockWithoutTls(port);
  // The metrics are HTTPS, for coordinator certificates only.
  httplib::Client plain("127.0.0.1", metrics);
  plain.set_read_timeout(2);
  EXPECT_FALSE(plain.Get("/metrics"));
  httplib::SSLClient anonymous("127.0.0.1", metrics);
  anonymous.enable_server_certificate_verification(false);
  anonymous.set_read_timeout(5);
  auto refused = anonymous.Get("/metrics");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  httplib::SSLClient c("127.0.0.1", metrics, certs + "/monitor.crt",
                       certs + "/monitor.key");
  // The worker's certificate names d0, not 127.0.0.1: not checked here.
  c.enable_server_certificate_verification(false);
  c.set_read_timeout(5);
  std::string page;
  // gRPC logs a failure on its own thread, a moment after the socket ends.
  for (int i = 0; i < 50; ++i) {
    auto r = c.Get("/metrics");
    page = r ? r->body : "";
    if (page.find("shoal_worker_tls_handshake_failures_total " +
                  std::to_string(kKnocks)) != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  RunCommand("kill $(cat " + pid + ")", &out);
  EXPECT_NE(page.find("shoal_worker_tls_handshake_failures_total " +
                      std::to_string(kKnocks)),
            std::string::npos)
      << page;
  const std::string text = ReadAll(log);
  size_t lines = 0;
  for (size_t at = 0;
       (at = text.find("Handshake failed", at)) != std::string::npos; ++at)
    ++lines;
  EXPECT_EQ(lines, 1u) << text;
  EXPECT_NE(text.find("counted, not logged"), std::string::npos) << text;
}

}  // namespace
}  // namespace shoal
