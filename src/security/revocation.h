// Turning a certificate off: the cluster CA's certificate revocation list
// (CRL), which `shoal certs revoke NAME` writes beside the CA as crl.pem.
// A lost or stolen board's certificate still verifies against the CA until
// it expires; every shoal endpoint that has the CRL refuses it (workers
// with --tls-crl, coordinators and serve with the cluster file's tls.crl).
//
// The list is read again when its file changes (looked at no more than
// once a second), so a revocation reaches running workers when the file
// is copied to them, without a restart.
#ifndef SHOAL_SECURITY_REVOCATION_H_
#define SHOAL_SECURITY_REVOCATION_H_

#include <openssl/x509.h>
#include <sys/types.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "util/status.h"

namespace shoal {

// The serial numbers in a CRL signed by the CA in `ca_pem`, as upper-case
// hex; errors name `origin` (the file) and say what is wrong: not a CRL,
// another issuer, a signature that does not verify.
StatusOr<std::set<std::string>> ParseRevokedSerials(const std::string& crl_pem,
                                                    const std::string& ca_pem,
                                                    const std::string& origin);

// A certificate's serial number as upper-case hex ("" if it has none).
std::string SerialHex(X509* cert);

class RevocationList {
 public:
  // Reads and checks `path` against the CA; an error names the file.
  static StatusOr<std::shared_ptr<RevocationList>> Load(
      const std::string& path, const std::string& ca_pem);

  // Whether the certificate in `cert_pem` (as a peer showed it) is
  // revoked. A CRL file that has become unreadable or invalid since it was
  // loaded keeps its last good list (a half-copied file must not let
  // revoked certificates back in); the error is kept for last_error().
  bool IsRevokedPem(const std::string& cert_pem);
  bool IsRevoked(X509* cert);

  const std::string& path() const { return path_; }
  size_t size();
  std::string last_error();

 private:
  RevocationList() = default;
  void MaybeReload();  // with mu_ held

  std::string path_, ca_pem_;
  std::mutex mu_;
  std::set<std::string> serials_;
  // What says the file changed: a list is replaced by a rename (a new
  // inode), or rewritten (size, and an mtime that may not move within a
  // clock tick).
  struct timespec mtime_ {};
  ino_t inode_ = 0;
  off_t size_ = 0;
  std::chrono::steady_clock::time_point checked_;
  std::string error_;
};

}  // namespace shoal

#endif  // SHOAL_SECURITY_REVOCATION_H_
