// The board's side of enrolment (`shoal certs enroll`, `shoal-worker
// enroll`; docs/security.md, "Enrolment"): make a key here, send only a
// certificate request and the token's secret to the CA's enrolment server,
// after checking that server against the CA hash the token carries, and
// write what a worker's --tls-* flags read.
#ifndef SHOAL_ENROLL_ENROLL_CLIENT_H_
#define SHOAL_ENROLL_ENROLL_CLIENT_H_

#include <string>

#include "security/tls_paths.h"
#include "util/status.h"

namespace shoal {

struct EnrollRequest {
  std::string name;     // the device, as the token names it
  std::string server;   // HOST:PORT of `shoal certs serve-enroll`
  std::string token;    // SECRET.CA_SHA256 (enroll/enroll_tokens.h)
  std::string out_dir;  // created (mode 0700) if missing
  // Each of connecting, sending and reading the answer.
  int timeout_ms = 10000;
};

// Enrols `req.name`: writes OUT/ca.crt (unless an identical one is there),
// OUT/NAME.crt and OUT/NAME.key (mode 0600), or nothing on any error, and
// returns their paths, checked as a worker loads them. Refuses, naming
// both hashes, a server whose CA is not the token's; and an answered
// certificate that is not for this key, this name, of this CA, as a device.
StatusOr<TlsPaths> Enroll(const EnrollRequest& req);

}  // namespace shoal

#endif  // SHOAL_ENROLL_ENROLL_CLIENT_H_
