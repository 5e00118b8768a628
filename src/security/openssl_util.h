// What the certificate code shares around OpenSSL's C API: owning pointers
// that free what OpenSSL allocated, its error queue as text, and PEM files
// read and parsed with errors that name the file.
#ifndef SHOAL_SECURITY_OPENSSL_UTIL_H_
#define SHOAL_SECURITY_OPENSSL_UTIL_H_

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct CrlFree {
  void operator()(X509_CRL* p) const { X509_CRL_free(p); }
};
using CrlPtr = std::unique_ptr<X509_CRL, CrlFree>;

// The reasons OpenSSL queued for the last failure, oldest first ("" if
// none); empties the queue.
std::string OpenSslErrors();

// The most a PEM file (certificate, key, CA bundle) may hold.
constexpr int64_t kMaxPemFileBytes = int64_t{1} << 20;

// The whole file, or an error naming it and why: missing, not a regular
// file, over kMaxPemFileBytes (util/read_file.h).
StatusOr<std::string> ReadTextFile(const std::string& path);

// The first certificate / private key in PEM text; `origin` names the file
// in errors.
StatusOr<X509Ptr> ParseCertPem(const std::string& pem,
                               const std::string& origin);
StatusOr<PkeyPtr> ParseKeyPem(const std::string& pem,
                              const std::string& origin);

std::string CertToPem(X509* cert);
std::string KeyToPem(EVP_PKEY* key);

// The DNS names in a certificate's subjectAltName.
std::vector<std::string> CertDnsNames(X509* cert);
// Its subject's common name ("" when none).
std::string CertCommonName(X509* cert);
// The lower-case hex SHA-256 of its DER encoding, as `openssl x509
// -fingerprint -sha256` prints it without the colons.
std::string CertSha256Hex(X509* cert);

}  // namespace shoal

#endif  // SHOAL_SECURITY_OPENSSL_UTIL_H_
