// Mutual TLS for every shoal endpoint (docs/security.md): the credentials a
// server listens with and a client dials with, and the role check RPC
// handlers make of their caller. Without a TLS identity (nullptr) both are
// plaintext and every caller is let through, as before TLS existed.
#ifndef SHOAL_RUNTIME_PEER_AUTH_H_
#define SHOAL_RUNTIME_PEER_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "security/tls_identity.h"

namespace shoal {

// With `tls`: TLS that requires and verifies a client certificate of the
// cluster CA. Without: plaintext.
std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(
    const TlsIdentity* tls);

// With `tls`: TLS showing our certificate and trusting only the cluster CA.
// The server's certificate is checked for `server_role` rather than for
// the address dialled, which may be an IP that changes (DHCP) or that no
// certificate names: gRPC compares the role name (RoleDnsName) with the
// certificate's subjectAltNames instead of the host.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(
    const TlsIdentity* tls);
void SetServerRole(grpc::ChannelArguments* args, const TlsIdentity* tls,
                   TlsRole server_role);

// The role in the caller's verified certificate; nullopt on plaintext or a
// certificate without exactly one role.
std::optional<TlsRole> CallerRole(const grpc::ServerContext& ctx);

// The common name of the caller's verified certificate (a device's name);
// "" on plaintext.
std::string CallerName(const grpc::ServerContext& ctx);

// OK when `tls` is null (plaintext) or the caller's certificate has role
// `need`; otherwise PERMISSION_DENIED naming `who`, the RPC and the caller.
grpc::Status RequireRole(const grpc::ServerContext& ctx, const TlsIdentity* tls,
                         TlsRole need, const std::string& who, const char* rpc);

// OK when `tls` is null or the caller's certificate has either role: a
// certificate of the cluster CA without one is no member.
grpc::Status RequireMember(const grpc::ServerContext& ctx,
                           const TlsIdentity* tls, const std::string& who,
                           const char* rpc);

// Whether `listen` (HOST:PORT) only takes connections from this machine.
bool IsLoopbackListen(const std::string& listen);

// An explanation to add to a failed call's message when the connection
// itself failed and TLS may be why: "" otherwise.
std::string TlsHint(const grpc::Status& s, bool tls_on);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_PEER_AUTH_H_
