// `shoal certs`: a cluster's own certificate authority. `init` makes the CA
// (an EC P-256 key and a self-signed certificate); `issue` makes a key and a
// certificate for one device or coordinator, signed by it, with its role in
// the certificate (security/tls_identity.h). Files are PEM in one
// directory: ca.crt, ca.key, NAME.crt, NAME.key; keys mode 0600.
#ifndef SHOAL_SECURITY_CERTS_H_
#define SHOAL_SECURITY_CERTS_H_

#include <openssl/evp.h>

#include <string>
#include <vector>

#include "security/openssl_util.h"
#include "security/tls_identity.h"
#include "security/tls_paths.h"
#include "util/status.h"

namespace shoal {

struct CertFiles {
  std::string cert, key;
};

std::string CaCertPath(const std::string& dir);
std::string CaKeyPath(const std::string& dir);
// The CA's certificate revocation list (security/revocation.h).
std::string CrlPath(const std::string& dir);

// Creates `dir` (mode 0700) if needed; refuses to replace a CA there.
StatusOr<CertFiles> InitCa(const std::string& dir, int days = 3650);

struct IssueOptions {
  TlsRole role = TlsRole::kDevice;
  // Extra subjectAltNames (IP addresses or DNS names) for other tools that
  // check host names; shoal itself verifies the role name.
  std::vector<std::string> sans;
  int days = 3650;
};

// Issues NAME.key and NAME.crt from the CA in `dir`; refuses to replace
// existing files.
StatusOr<CertFiles> IssueCert(const std::string& dir, const std::string& name,
                              const IssueOptions& opts);

// A fresh EC P-256 key, the kind every shoal certificate carries.
StatusOr<PkeyPtr> NewDeviceKey();

// Signs NAME's public key `key`, made elsewhere (on the board that enrols,
// security/csr.h), exactly as IssueCert signs the key it makes, and writes
// DIR/NAME.crt (no key: the CA never sees it) so that `revoke NAME` finds
// it; refuses when DIR/NAME.crt exists. Returns the certificate as PEM.
StatusOr<std::string> IssueCertForKey(const std::string& dir,
                                      const std::string& name, EVP_PKEY* key,
                                      const IssueOptions& opts);

// The lower-case hex SHA-256 of the CA's certificate (DER) in `dir`: what
// an enrolment token pins.
StatusOr<std::string> CaSha256(const std::string& dir);

// The DNS name of the enrolment server's certificate. `--san` refuses
// names starting with shoal-, so no device certificate carries it: a board
// enrolling checks it, and a board of the cluster cannot pose as the
// server to collect another's token.
inline constexpr char kEnrollServerDnsName[] = "shoal-enroll";

struct PemIdentity {
  std::string ca, cert, key;
};

// A certificate for the enrolment server (`certs serve-enroll`), signed by
// the CA in `dir`, for a fresh key that is returned, never written:
// serverAuth only, the DNS name kEnrollServerDnsName, no role, so it opens
// no worker and no coordinator.
StatusOr<PemIdentity> IssueEnrollServerCert(const std::string& dir);

struct Revoked {
  std::string crl;     // the list written: CrlPath(dir)
  std::string serial;  // the certificate's serial, hex
  int entries = 0;     // certificates the list now holds
};

// Adds the certificate issued to NAME (DIR/NAME.crt) to the CA's
// revocation list, DIR/crl.pem, signed by the CA's key: made when absent,
// replaced whole (written beside and renamed) when present, keeping its
// entries. Refuses a certificate of another CA and one revoked already.
StatusOr<Revoked> RevokeCert(const std::string& dir, const std::string& name,
                             int days = 3650);

}  // namespace shoal

#endif  // SHOAL_SECURITY_CERTS_H_
