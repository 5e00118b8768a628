#include "security/tls_identity.h"

#include <openssl/err.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <cstdio>

#include "security/openssl_util.h"

namespace shoal {

const char* RoleName(TlsRole r) {
  return r == TlsRole::kCoordinator ? "coordinator" : "device";
}

StatusOr<TlsRole> ParseRole(const std::string& text) {
  if (text == "coordinator") return TlsRole::kCoordinator;
  if (text == "device") return TlsRole::kDevice;
  return InvalidArgument("role '" + text + "' is not coordinator or device");
}

std::string RoleDnsName(TlsRole r) {
  return std::string("shoal-") + RoleName(r);
}

std::optional<TlsRole> RoleOfDnsNames(const std::vector<std::string>& names) {
  std::optional<TlsRole> found;
  int count = 0;
  for (TlsRole r : {TlsRole::kCoordinator, TlsRole::kDevice}) {
    for (const auto& n : names) {
      if (n == RoleDnsName(r)) {
        found = r;
        ++count;
      }
    }
  }
  // Both roles in one certificate is no role: it would pass either check.
  return count == 1 ? found : std::nullopt;
}

namespace {

// The key must be its owner's alone, as ssh insists for its keys: a key
// others can read is a key others may have copied.
Status CheckKeyMode(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Status::Ok();  // read fails later
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
    return FailedPrecondition("private key " + path +
                              " may be read by other users (mode " + mode +
                              "): chmod 600 " + path);
  }
  return Status::Ok();
}

Status VerifyAgainstCa(X509* ca, X509* cert, const TlsPaths& p) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX_init(ctx, store, cert, nullptr);
  const int ok = X509_verify_cert(ctx);
  const int err = X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  ERR_clear_error();
  if (ok == 1) return Status::Ok();
  return FailedPrecondition("certificate " + p.cert +
                            " does not verify against the CA " + p.ca + ": " +
                            X509_verify_cert_error_string(err));
}

}  // namespace

StatusOr<std::shared_ptr<const TlsIdentity>> LoadTlsIdentity(
    const TlsPaths& p) {
  if (p.ca.empty() || p.cert.empty() || p.key.empty()) {
    std::string missing;
    for (const auto& [v, n] : {std::pair{&p.ca, "the CA certificate"},
                               std::pair{&p.cert, "the certificate"},
                               std::pair{&p.key, "the private key"}}) {
      if (v->empty()) missing += (missing.empty() ? "" : ", ") + std::string(n);
    }
    return InvalidArgument(
        "TLS needs the CA certificate, a certificate and its "
        "key; missing: " +
        missing);
  }
  auto id = std::make_shared<TlsIdentity>();
  ASSIGN_OR_RETURN(id->ca_pem, ReadTextFile(p.ca));
  ASSIGN_OR_RETURN(id->cert_pem, ReadTextFile(p.cert));
  RETURN_IF_ERROR(CheckKeyMode(p.key));
  ASSIGN_OR_RETURN(id->key_pem, ReadTextFile(p.key));
  ASSIGN_OR_RETURN(X509Ptr ca,
                   ParseCertPem(id->ca_pem, "CA certificate " + p.ca));
  ASSIGN_OR_RETURN(X509Ptr cert,
                   ParseCertPem(id->cert_pem, "certificate " + p.cert));
  ASSIGN_OR_RETURN(PkeyPtr key,
                   ParseKeyPem(id->key_pem, "private key " + p.key));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return FailedPrecondition("private key " + p.key +
                              " is not the key of certificate " + p.cert);
  }
  RETURN_IF_ERROR(VerifyAgainstCa(ca.get(), cert.get(), p));
  const auto role = RoleOfDnsNames(CertDnsNames(cert.get()));
  if (!role) {
    return FailedPrecondition(
        "certificate " + p.cert +
        " carries no shoal role (a subjectAltName shoal-coordinator or "
        "shoal-device): issue it with `shoal certs issue`");
  }
  id->role = *role;
  id->name = CertCommonName(cert.get());
  if (!p.crl.empty()) {
    ASSIGN_OR_RETURN(id->revoked, RevocationList::Load(p.crl, id->ca_pem));
    if (id->revoked->IsRevoked(cert.get())) {
      return FailedPrecondition("certificate " + p.cert + " (serial " +
                                SerialHex(cert.get()) + ") is revoked by " +
                                p.crl + ": issue this device a new one");
    }
  }
  return std::shared_ptr<const TlsIdentity>(std::move(id));
}

}  // namespace shoal
