// Where a process's TLS identity lies: the cluster CA's certificate and its
// own certificate and key, as PEM files (docs/security.md). All empty:
// plaintext.
#ifndef SHOAL_SECURITY_TLS_PATHS_H_
#define SHOAL_SECURITY_TLS_PATHS_H_

#include <string>

namespace shoal {

struct TlsPaths {
  std::string ca, cert, key;
  // The CA's revocation list (security/revocation.h); optional, and no
  // TLS on its own.
  std::string crl;
  bool any() const { return !ca.empty() || !cert.empty() || !key.empty(); }
};

// What `shoal certs issue NAME` writes in `dir` and NAME's process loads:
// DIR/ca.crt, DIR/NAME.crt, DIR/NAME.key.
inline TlsPaths IssuedPaths(const std::string& dir, const std::string& name) {
  return TlsPaths{dir + "/ca.crt", dir + "/" + name + ".crt",
                  dir + "/" + name + ".key", ""};
}

}  // namespace shoal

#endif  // SHOAL_SECURITY_TLS_PATHS_H_
