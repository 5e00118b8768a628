#include "enroll/enroll_server.h"

#include <unistd.h>

#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "enroll/enroll_tokens.h"
#include "security/certs.h"
#include "security/csr.h"

namespace shoal {

namespace {

constexpr auto kRefusalWindow = std::chrono::minutes(1);
constexpr auto kRefusalLogEvery = std::chrono::seconds(10);
// Addresses remembered at once; past it the oldest records are dropped.
constexpr size_t kMaxAddresses = 4096;

// A peer's text (a requested name) made safe for a log line.
std::string Printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out + (s.size() > 64 ? "..." : "");
}

std::string AddressOf(const std::string& remote) {
  const size_t colon = remote.rfind(':');
  return colon == std::string::npos ? remote : remote.substr(0, colon);
}

}  // namespace

StatusOr<std::unique_ptr<EnrollService>> EnrollService::Create(
    const EnrollServiceOptions& opts) {
  std::unique_ptr<EnrollService> s(new EnrollService(opts));
  ASSIGN_OR_RETURN(s->ca_sha256_, CaSha256(opts.dir));
  ASSIGN_OR_RETURN(PemIdentity pem, IssueEnrollServerCert(opts.dir));
  auto id = std::make_shared<TlsIdentity>();
  id->ca_pem = pem.ca;
  id->cert_pem = pem.cert;
  id->key_pem = pem.key;
  id->name = "shoal enrolment";
  s->identity_ = std::move(id);
  return s;
}

void EnrollService::Log(const std::string& line) {
  if (opts_.log) {
    opts_.log(line);
  } else {
    std::cerr << "shoal certs serve-enroll: " << line << "\n";
  }
}

bool EnrollService::TooManyRefusals(const std::string& addr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = refusals_.find(addr);
  if (it == refusals_.end()) return false;
  const auto now = std::chrono::steady_clock::now();
  while (!it->second.empty() && now - it->second.front() > kRefusalWindow) {
    it->second.pop_front();
  }
  return static_cast<int>(it->second.size()) >= opts_.max_refusals_per_minute;
}

HttpReply EnrollService::Refuse(const std::string& addr, int status,
                                const std::string& why) {
  std::string line;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (refusals_.size() >= kMaxAddresses && refusals_.count(addr) == 0) {
      refusals_.clear();
    }
    refusals_[addr].push_back(now);
    // A flood of bad requests must not fill the log.
    if (now - last_refusal_log_ >= kRefusalLogEvery) {
      line = "refused an enrolment from " + addr + " (HTTP " +
             std::to_string(status) + "): " + why;
      if (refusals_not_logged_ > 0) {
        line += " (" + std::to_string(refusals_not_logged_) +
                " more refused since the last line)";
      }
      last_refusal_log_ = now;
      refusals_not_logged_ = 0;
    } else {
      ++refusals_not_logged_;
    }
  }
  if (!line.empty()) Log(line);
  return JsonError(status, why);
}

HttpReply EnrollService::Handle(const HttpRequest& r) {
  const std::string addr = AddressOf(r.remote);
  if (TooManyRefusals(addr)) {
    return Refuse(addr, 429,
                  "too many refused enrolments from " + addr +
                      " in the last minute: wait a minute");
  }
  const std::string auth = r.Header("authorization");
  const std::string prefix = "Bearer ";
  if (auth.rfind(prefix, 0) != 0) {
    return Refuse(addr, 401,
                  "no token: send the enrolment token's secret as "
                  "Authorization: Bearer SECRET (`shoal certs enroll` does)");
  }
  const std::string secret = auth.substr(prefix.size());
  const int64_t now = std::time(nullptr);
  auto file = EnrollTokenFile::Open(opts_.dir);
  if (!file.ok()) {
    Log("cannot read the tokens: " + file.status().message());
    return JsonError(500, "the enrolment server cannot read its tokens");
  }
  auto token = file.value()->Find(secret, now);
  if (!token.ok()) return Refuse(addr, 401, token.status().message());
  EnrollTokenRecord& t = *token.value();
  auto csr = ParseCsrPem(r.body);
  if (!csr.ok()) return Refuse(addr, 400, csr.status().message());
  if (csr->common_name != t.name) {
    return Refuse(addr, 403,
                  "the certificate request is for '" +
                      Printable(csr->common_name) + "', and the token for '" +
                      t.name + "': a token issues to the device it names only");
  }
  IssueOptions o;
  o.role = TlsRole::kDevice;
  auto pem = IssueCertForKey(opts_.dir, t.name, csr->public_key.get(), o);
  if (!pem.ok()) {
    if (pem.status().code() == Code::kFailedPrecondition) {
      return Refuse(addr, 409, pem.status().message());
    }
    Log("cannot issue " + t.name + ": " + pem.status().message());
    return JsonError(500, "the enrolment server cannot issue " + t.name +
                              "'s certificate (its log says why)");
  }
  t.used = now;
  t.used_by = addr;
  if (Status s = file.value()->Save(now); !s.ok()) {
    // A certificate out while its token still reads unused could be
    // issued twice: take it back.
    unlink(IssuedPaths(opts_.dir, t.name).cert.c_str());
    Log("cannot mark the token of " + t.name + " used: " + s.message());
    return JsonError(500,
                     "the enrolment server cannot record the token as "
                     "used (its log says why)");
  }
  Log("enrolled " + t.name + " from " + addr + ": " +
      IssuedPaths(opts_.dir, t.name).cert);
  HttpReply ok;
  ok.content_type = "application/json";
  ok.body = nlohmann::json{{"name", t.name},
                           {"certificate", pem.value()},
                           {"ca", identity_->ca_pem}}
                .dump();
  return ok;
}

std::vector<HttpRoute> EnrollService::Routes() {
  return {{"POST", "/v1/enroll",
           [this](const HttpRequest& r) { return Handle(r); }}};
}

HttpServerOptions EnrollService::ServerOptions() const {
  HttpServerOptions o;
  o.threads = 2;
  o.max_body_bytes = static_cast<int64_t>(kMaxCsrBytes);
  o.io_timeout_ms = 5000;
  o.tls = identity_;
  // The token is the credential; a board has no certificate yet.
  o.require_credentials = false;
  o.send_ca = true;
  return o;
}

StatusOr<std::unique_ptr<HttpServer>> StartEnrollServer(
    const std::string& listen, EnrollService* service) {
  return HttpServer::Start(listen, "shoal certs serve-enroll",
                           service->Routes(), service->ServerOptions());
}

}  // namespace shoal
