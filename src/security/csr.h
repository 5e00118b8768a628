// Certificate signing requests (PKCS#10), the one thing a board sends when
// it enrols: its public key and its name, signed with its private key, so
// the key itself never leaves the board (docs/security.md, "Enrolment").
#ifndef SHOAL_SECURITY_CSR_H_
#define SHOAL_SECURITY_CSR_H_

#include <openssl/evp.h>

#include <string>
#include <string_view>

#include "security/openssl_util.h"
#include "util/status.h"

namespace shoal {

// The most a CSR may hold: a P-256 request is under 1 KiB.
constexpr size_t kMaxCsrBytes = 16 * 1024;

// A PEM request for `key` with the subject CN=name, signed by `key`.
StatusOr<std::string> MakeCsrPem(EVP_PKEY* key, const std::string& name);

struct CsrContents {
  PkeyPtr public_key;
  std::string common_name;
};

// What a request from a peer asks for, once checked: PEM (BEGIN
// CERTIFICATE REQUEST) of at most kMaxCsrBytes, its signature made by the
// key it carries, that key EC P-256 (what every shoal certificate holds),
// and a common name. Whatever else it asks (extensions, other subject
// fields) is not looked at: the CA decides what a certificate says.
StatusOr<CsrContents> ParseCsrPem(std::string_view pem);

}  // namespace shoal

#endif  // SHOAL_SECURITY_CSR_H_
