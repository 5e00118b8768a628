// The CA's side of enrolment (`shoal certs serve-enroll`, docs/security.md,
// "Enrolment"): an HTTPS endpoint where a board posts a certificate
// request with a one-time token (enroll/enroll_tokens.h) and receives its
// device certificate and the CA's.
//
//   POST /v1/enroll
//   Authorization: Bearer SECRET        the token's secret part
//   body: the certificate request, PEM (security/csr.h)
//   200: {"name": ..., "certificate": PEM, "ca": PEM}
//   else {"error": why}: 401 the token (unknown, used, expired), 400 the
//   request, 403 a request for another name than the token's, 409 a name
//   that has a certificate already, 413 a body over 16 KiB, 429 too many
//   refusals from one address in a minute.
//
// The server shows a certificate the CA signs when it starts, for a key
// held only in memory, with the name shoal-enroll and no role; it sends the
// CA's certificate after it, so that a board can check the pair against
// the token's hash before it sends anything.
#ifndef SHOAL_ENROLL_ENROLL_SERVER_H_
#define SHOAL_ENROLL_ENROLL_SERVER_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/http_server.h"
#include "security/tls_identity.h"
#include "util/status.h"

namespace shoal {

struct EnrollServiceOptions {
  std::string dir;  // the CA's: ca.crt, ca.key, enroll-tokens.json
  // Refused requests an address may make in a minute before it is
  // answered 429 without a look at what it sent.
  int max_refusals_per_minute = 10;
  // One line per enrolment, and refusals at most one line every 10 s
  // (with how many were left out); null: standard error.
  std::function<void(const std::string&)> log;
};

class EnrollService {
 public:
  // Loads the CA in `opts.dir` and issues the server's certificate.
  static StatusOr<std::unique_ptr<EnrollService>> Create(
      const EnrollServiceOptions& opts);

  // What the HTTPS server shows: the enrolment certificate and its key.
  std::shared_ptr<const TlsIdentity> identity() const { return identity_; }
  const std::string& ca_sha256() const { return ca_sha256_; }

  // Answers one POST /v1/enroll.
  HttpReply Handle(const HttpRequest& r);

  // The route and the server settings that serve Handle: the body limit,
  // TLS with the CA sent along, no client certificate asked.
  std::vector<HttpRoute> Routes();
  HttpServerOptions ServerOptions() const;

 private:
  explicit EnrollService(EnrollServiceOptions o) : opts_(std::move(o)) {}
  HttpReply Refuse(const std::string& addr, int status, const std::string& why);
  bool TooManyRefusals(const std::string& addr);
  void Log(const std::string& line);

  EnrollServiceOptions opts_;
  std::shared_ptr<const TlsIdentity> identity_;
  std::string ca_sha256_;

  std::mutex mu_;  // the fields below
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>>
      refusals_;
  std::chrono::steady_clock::time_point last_refusal_log_{};
  int refusals_not_logged_ = 0;
};

// Serves `service` (which must outlive the server) on `listen`
// (HOST:PORT; port 0: any free port).
StatusOr<std::unique_ptr<HttpServer>> StartEnrollServer(
    const std::string& listen, EnrollService* service);

}  // namespace shoal

#endif  // SHOAL_ENROLL_ENROLL_SERVER_H_
