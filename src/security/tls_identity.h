// A process's TLS identity, loaded and checked before any connection: the
// cluster CA it trusts and the certificate and key it shows, whose role
// (coordinator or device) the cluster CA signed into it. A bad file is
// named at start, not discovered as a failed handshake later.
#ifndef SHOAL_SECURITY_TLS_IDENTITY_H_
#define SHOAL_SECURITY_TLS_IDENTITY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "security/revocation.h"
#include "security/tls_paths.h"
#include "util/status.h"

namespace shoal {

enum class TlsRole { kCoordinator, kDevice };

// "coordinator", "device".
const char* RoleName(TlsRole r);
StatusOr<TlsRole> ParseRole(const std::string& text);
// The subjectAltName DNS entry that carries the role: "shoal-coordinator",
// "shoal-device". Clients verify a server against it (gRPC's target name
// override), servers read it from the client's certificate.
std::string RoleDnsName(TlsRole r);
// The role among a certificate's DNS names, if exactly one is there.
std::optional<TlsRole> RoleOfDnsNames(const std::vector<std::string>& names);

struct TlsIdentity {
  std::string ca_pem, cert_pem, key_pem;
  TlsRole role = TlsRole::kDevice;
  std::string name;  // the certificate's common name
  // The certificates this process refuses although the CA signed them
  // (TlsPaths::crl); null without a list.
  std::shared_ptr<RevocationList> revoked;
};

// Reads and checks the three files: each readable and PEM, the key not
// readable by others than its owner, the key the certificate's, the
// certificate signed by the CA and current, and carrying a role; with a
// revocation list, the list signed by the CA and the certificate not on
// it. Errors name the file at fault.
StatusOr<std::shared_ptr<const TlsIdentity>> LoadTlsIdentity(
    const TlsPaths& paths);

}  // namespace shoal

#endif  // SHOAL_SECURITY_TLS_IDENTITY_H_
