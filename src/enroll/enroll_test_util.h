// Test helper: an enrolment service on loopback with a temporary CA, and a
// board's directory to enrol into; the fixture of enroll_test.cc and of
// cli/enrolled_worker_test.cc (where the certificate serves a worker, which
// enroll does not build on). In namespace shoal, not an anonymous one: the
// tests of both files share the one fixture class.
#ifndef SHOAL_ENROLL_ENROLL_TEST_UTIL_H_
#define SHOAL_ENROLL_ENROLL_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <ctime>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "enroll/enroll_client.h"
#include "enroll/enroll_server.h"
#include "enroll/enroll_tokens.h"
#include "security/certs_test_util.h"

namespace shoal {

class Enrolment : public ::testing::Test {
 protected:
  void SetUp() override {
    EnrollServiceOptions o;
    o.dir = ca_.dir;
    o.max_refusals_per_minute = max_refusals_;
    o.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(line);
    };
    auto service = EnrollService::Create(o);
    ASSERT_TRUE(service.ok()) << service.status().message();
    service_ = std::move(service).value();
    // The service's own route, recording what each request carried.
    std::vector<HttpRoute> routes = {
        {"POST", "/v1/enroll", [this](const HttpRequest& r) {
           {
             std::lock_guard<std::mutex> lock(mu_);
             bodies_.emplace_back(r.body);
             for (const auto& [k, v] : r.headers)
               headers_ += k + ": " + v + "\n";
           }
           return service_->Handle(r);
         }}};
    auto server = HttpServer::Start("127.0.0.1:0", "enrolment test", routes,
                                    service_->ServerOptions());
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
    char tmpl[] = "/tmp/shoal-enroll-board-XXXXXX";
    board_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(board_); }

  std::string Token(const std::string& name, int64_t ttl = 3600,
                    int64_t made = std::time(nullptr)) {
    auto t = CreateEnrollToken(ca_.dir, name, ttl, made);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? t->text : "";
  }

  std::string Server() const {
    return "127.0.0.1:" + std::to_string(server_->port());
  }

  StatusOr<TlsPaths> EnrollAs(const std::string& name, const std::string& token,
                              const std::string& out = "") {
    EnrollRequest r;
    r.name = name;
    r.server = Server();
    r.token = token;
    r.out_dir = out.empty() ? board_ + "/certs" : out;
    r.timeout_ms = 5000;
    return Enroll(r);
  }

  size_t Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_.size();
  }

  int max_refusals_ = 10;
  testing::TempCa ca_;
  std::unique_ptr<EnrollService> service_;
  std::unique_ptr<HttpServer> server_;
  std::string board_;
  std::mutex mu_;
  std::vector<std::string> log_, bodies_;
  std::string headers_;
};

}  // namespace shoal

#endif  // SHOAL_ENROLL_ENROLL_TEST_UTIL_H_
