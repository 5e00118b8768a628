#include "enroll/enroll_client.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "enroll/enroll_tokens.h"
#include "security/certs.h"
#include "security/csr.h"
#include "security/device_name.h"
#include "security/new_file.h"
#include "security/openssl_util.h"
#include "security/tls_identity.h"
#include "util/net_address.h"

namespace shoal {

namespace {

namespace fs = std::filesystem;

struct StoreFree {
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
};

// The handshake's check of the server, in place of OpenSSL's own (which
// needs the CA beforehand): among the certificates the server sends, the
// one whose SHA-256 is the token's pin is the CA, and the server's own
// must be signed by it, current, for TLS servers, and named shoal-enroll.
struct PinCheck {
  std::string pin;
  std::string server;  // for messages
  std::string error;   // why the handshake was refused; "" when it was not
  X509Ptr ca;          // the pinned CA, once found
};

int VerifyPinned(X509_STORE_CTX* sctx, void* arg) {
  auto* pc = static_cast<PinCheck*>(arg);
  X509* leaf = X509_STORE_CTX_get0_cert(sctx);
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_untrusted(sctx);
  X509* ca = nullptr;
  std::string seen;
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); ++i) {
    X509* c = sk_X509_value(chain, i);
    if (c == leaf) continue;
    const std::string h = CertSha256Hex(c);
    seen += (seen.empty() ? "" : ", ") + h;
    if (h.size() == pc->pin.size() &&
        CRYPTO_memcmp(h.data(), pc->pin.data(), h.size()) == 0) {
      ca = c;
    }
  }
  if (ca == nullptr) {
    pc->error = "the enrolment server at " + pc->server +
                " does not show the CA the token pins: the token's CA has "
                "SHA-256 " +
                pc->pin + ", the server's " +
                (seen.empty() ? std::string("chain has no CA certificate")
                              : "CA has SHA-256 " + seen) +
                " (another cluster's server, or someone in the middle); "
                "nothing was sent";
    X509_STORE_CTX_set_error(sctx, X509_V_ERR_CERT_UNTRUSTED);
    return 0;
  }
  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> v(X509_STORE_CTX_new());
  X509_STORE_add_cert(store.get(), ca);
  if (X509_STORE_CTX_init(v.get(), store.get(), leaf, nullptr) != 1) {
    pc->error = "cannot check the server's certificate: " + OpenSslErrors();
    return 0;
  }
  X509_STORE_CTX_set_purpose(v.get(), X509_PURPOSE_SSL_SERVER);
  X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(v.get()),
                              kEnrollServerDnsName, 0);
  if (X509_verify_cert(v.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(v.get());
    pc->error = "the enrolment server at " + pc->server +
                " shows a certificate that is not an enrolment server's of "
                "the pinned CA (" +
                X509_verify_cert_error_string(err) +
                "; a member's certificate cannot serve enrolment); nothing "
                "was sent";
    OpenSslErrors();
    X509_STORE_CTX_set_error(sctx, err);
    return 0;
  }
  pc->ca.reset(X509_dup(ca));
  return 1;
}

// The answered certificate, checked against what the board asked for.
Status CheckAnswer(X509* cert, X509* ca, EVP_PKEY* key,
                   const std::string& name) {
  if (X509_check_private_key(cert, key) != 1) {
    OpenSslErrors();
    return FailedPrecondition(
        "the certificate the server answered is not for this board's key");
  }
  if (CertCommonName(cert) != name) {
    return FailedPrecondition("the certificate the server answered is for '" +
                              CertCommonName(cert) + "', not '" + name + "'");
  }
  if (X509_verify(cert, X509_get0_pubkey(ca)) != 1) {
    OpenSslErrors();
    return FailedPrecondition(
        "the certificate the server answered is not signed by the pinned CA");
  }
  if (RoleOfDnsNames(CertDnsNames(cert)) != TlsRole::kDevice) {
    return FailedPrecondition(
        "the certificate the server answered is not a device certificate");
  }
  return Status::Ok();
}

// httplib's names for its errors ("Connection", "Read") are one word.
std::string Why(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect (nothing listens there, or a firewall rejects "
             "it)";
    case httplib::Error::ConnectionTimeout:
      return "no connection in time (the host is off the network, or a "
             "firewall drops it)";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed (is it `shoal certs serve-enroll`?)";
    case httplib::Error::Read:
      return "no answer in time, or the connection closed";
    case httplib::Error::Write:
      return "the request could not be sent";
    default:
      return httplib::to_string(e);
  }
}

}  // namespace

StatusOr<TlsPaths> Enroll(const EnrollRequest& req) {
  RETURN_IF_ERROR(CheckDeviceName(req.name));
  ASSIGN_OR_RETURN(EnrollTokenText token, ParseEnrollToken(req.token));
  ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(req.server, "--server"));
  if (hp.host.empty() || hp.port <= 0 || hp.port > 65535) {
    return InvalidArgument("--server " + req.server +
                           ": give HOST:PORT of `shoal certs serve-enroll`");
  }
  TlsPaths out = IssuedPaths(req.out_dir, req.name);
  std::error_code ec;
  for (const auto& f : {out.cert, out.key}) {
    if (fs::exists(f, ec)) {
      return FailedPrecondition(f + " exists already: this board has " +
                                req.name + "'s certificate (remove " +
                                out.cert + " and " + out.key +
                                " to enrol again)");
    }
  }
  const bool have_ca = fs::exists(out.ca, ec);
  if (have_ca) {
    ASSIGN_OR_RETURN(std::string pem, ReadTextFile(out.ca));
    ASSIGN_OR_RETURN(X509Ptr old,
                     ParseCertPem(pem, "CA certificate " + out.ca));
    if (CertSha256Hex(old.get()) != token.ca_sha256) {
      return FailedPrecondition(out.ca + " is another CA (SHA-256 " +
                                CertSha256Hex(old.get()) +
                                ") than the token's (" + token.ca_sha256 +
                                "): enrol into another --out directory");
    }
  }

  // The key is made here and written only here: the request carries the
  // public half, signed.
  ASSIGN_OR_RETURN(PkeyPtr key, NewDeviceKey());
  ASSIGN_OR_RETURN(std::string csr, MakeCsrPem(key.get(), req.name));

  httplib::SSLClient cli(hp.host, hp.port);
  PinCheck pin{token.ca_sha256, req.server, "", nullptr};
  // httplib's own check needs the CA beforehand; VerifyPinned stands in for
  // it during the handshake, before a byte of the request is sent.
  cli.enable_server_certificate_verification(false);
  SSL_CTX* ctx = cli.ssl_context();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_cert_verify_callback(ctx, VerifyPinned, &pin);
  const time_t sec = req.timeout_ms / 1000;
  const time_t usec = (req.timeout_ms % 1000) * 1000;
  cli.set_connection_timeout(sec, usec);
  cli.set_read_timeout(sec, usec);
  cli.set_write_timeout(sec, usec);
  httplib::Headers headers = {{"Authorization", "Bearer " + token.secret}};
  auto res = cli.Post("/v1/enroll", headers, csr, "application/pkcs10");
  if (!pin.error.empty()) return FailedPrecondition(pin.error);
  if (!res) {
    OpenSslErrors();
    return Unavailable(
        "the enrolment server at " + req.server + ": " + Why(res.error()) +
        " (" + std::to_string(req.timeout_ms) + " ms allowed for each step)");
  }
  nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    const std::string why =
        body.is_object() && body.contains("error") && body["error"].is_string()
            ? body["error"].get<std::string>()
            : "HTTP " + std::to_string(res->status);
    return FailedPrecondition("the enrolment server at " + req.server +
                              " refused " + req.name + " (HTTP " +
                              std::to_string(res->status) + "): " + why);
  }
  if (!body.is_object() || !body.contains("certificate") ||
      !body["certificate"].is_string() || !body.contains("ca") ||
      !body["ca"].is_string()) {
    return FailedPrecondition("the enrolment server at " + req.server +
                              " answered no certificate and CA");
  }
  const std::string cert_pem = body["certificate"].get<std::string>();
  const std::string ca_pem = body["ca"].get<std::string>();
  ASSIGN_OR_RETURN(X509Ptr cert,
                   ParseCertPem(cert_pem, "the answered certificate"));
  ASSIGN_OR_RETURN(X509Ptr ca, ParseCertPem(ca_pem, "the answered CA"));
  if (CertSha256Hex(ca.get()) != token.ca_sha256) {
    return FailedPrecondition(
        "the enrolment server answered a CA with SHA-256 " +
        CertSha256Hex(ca.get()) + ", not the token's " + token.ca_sha256);
  }
  RETURN_IF_ERROR(CheckAnswer(cert.get(), ca.get(), key.get(), req.name));

  if (!fs::exists(req.out_dir, ec)) {
    fs::create_directories(req.out_dir, ec);
    if (ec) {
      return Unavailable("cannot create " + req.out_dir + ": " + ec.message());
    }
    chmod(req.out_dir.c_str(), 0700);
  }
  std::vector<std::string> written;
  auto undo = [&](Status s) {
    for (const auto& f : written) unlink(f.c_str());
    return s;
  };
  if (!have_ca) {
    RETURN_IF_ERROR(WriteNewFile(out.ca, CertToPem(ca.get()), 0644));
    written.push_back(out.ca);
  }
  if (Status s = WriteNewFile(out.key, KeyToPem(key.get()), 0600); !s.ok()) {
    return undo(s);
  }
  written.push_back(out.key);
  if (Status s = WriteNewFile(out.cert, CertToPem(cert.get()), 0644); !s.ok()) {
    return undo(s);
  }
  written.push_back(out.cert);
  // What the worker will do with them, done now.
  auto id = LoadTlsIdentity(out);
  if (!id.ok()) return undo(id.status());
  return out;
}

}  // namespace shoal
