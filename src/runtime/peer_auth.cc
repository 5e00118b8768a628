#include "runtime/peer_auth.h"

#include "util/net_address.h"

namespace shoal {

std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(
    const TlsIdentity* tls) {
  if (tls == nullptr) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions o(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  o.pem_root_certs = tls->ca_pem;
  o.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_pem});
  return grpc::SslServerCredentials(o);
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(
    const TlsIdentity* tls) {
  if (tls == nullptr) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = tls->ca_pem;
  o.pem_private_key = tls->key_pem;
  o.pem_cert_chain = tls->cert_pem;
  return grpc::SslCredentials(o);
}

void SetServerRole(grpc::ChannelArguments* args, const TlsIdentity* tls,
                   TlsRole server_role) {
  if (tls != nullptr) args->SetSslTargetNameOverride(RoleDnsName(server_role));
}

namespace {

std::vector<std::string> Property(const grpc::ServerContext& ctx,
                                  const char* name) {
  std::vector<std::string> out;
  auto auth = ctx.auth_context();
  if (!auth) return out;
  for (const auto& v : auth->FindPropertyValues(name)) {
    out.emplace_back(v.data(), v.size());
  }
  return out;
}

}  // namespace

std::optional<TlsRole> CallerRole(const grpc::ServerContext& ctx) {
  auto auth = ctx.auth_context();
  if (!auth || !auth->IsPeerAuthenticated()) return std::nullopt;
  // gRPC lists every subjectAltName here (DNS, IP, URI alike), each as its
  // bare value; only the CA can have put a role name among them.
  return RoleOfDnsNames(Property(ctx, GRPC_X509_SAN_PROPERTY_NAME));
}

std::string CallerName(const grpc::ServerContext& ctx) {
  auto auth = ctx.auth_context();
  if (!auth || !auth->IsPeerAuthenticated()) return "";
  const auto cn = Property(ctx, GRPC_X509_CN_PROPERTY_NAME);
  return cn.empty() ? "" : cn.front();
}

namespace {

// PERMISSION_DENIED when the caller's certificate is on `tls`'s
// revocation list.
grpc::Status CheckNotRevoked(const grpc::ServerContext& ctx,
                             const TlsIdentity* tls, const std::string& who,
                             const char* rpc) {
  if (!tls->revoked) return grpc::Status::OK;
  const auto pem = Property(ctx, GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (pem.empty() || !tls->revoked->IsRevokedPem(pem.front())) {
    return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      who + " refuses " + rpc + " from '" + CallerName(ctx) +
                          "' (" + ctx.peer() +
                          "): its certificate is revoked (" +
                          tls->revoked->path() + ")");
}

// `need` nullopt: either role.
grpc::Status Check(const grpc::ServerContext& ctx, const TlsIdentity* tls,
                   std::optional<TlsRole> need, const std::string& who,
                   const char* rpc) {
  if (tls == nullptr) return grpc::Status::OK;
  const auto role = CallerRole(ctx);
  const auto cn = Property(ctx, GRPC_X509_CN_PROPERTY_NAME);
  if (role && (!need || role == need)) {
    if (auto s = CheckNotRevoked(ctx, tls, who, rpc); !s.ok()) return s;
    return grpc::Status::OK;
  }
  const std::string caller =
      (cn.empty() ? std::string("the caller") : "caller " + cn.front()) + " (" +
      ctx.peer() + ")";
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      who + " refuses " + rpc + " from " + caller + ": it takes a " +
          (need ? RoleName(*need) : "coordinator or device") +
          " certificate, and the caller's is " +
          (role ? std::string("a ") + RoleName(*role) + " certificate"
                : std::string("without a shoal role")));
}

}  // namespace

grpc::Status RequireRole(const grpc::ServerContext& ctx, const TlsIdentity* tls,
                         TlsRole need, const std::string& who,
                         const char* rpc) {
  return Check(ctx, tls, need, who, rpc);
}

grpc::Status RequireMember(const grpc::ServerContext& ctx,
                           const TlsIdentity* tls, const std::string& who,
                           const char* rpc) {
  return Check(ctx, tls, std::nullopt, who, rpc);
}

bool IsLoopbackListen(const std::string& listen) {
  auto hp = SplitHostPort(listen, "listen address");
  if (!hp.ok()) return false;
  const std::string& h = hp->host;
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

std::string TlsHint(const grpc::Status& s, bool tls_on) {
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE) return "";
  const std::string& m = s.error_message();
  const bool handshake = m.find("andshake") != std::string::npos ||
                         m.find("SSL") != std::string::npos ||
                         m.find("ssl") != std::string::npos;
  if (tls_on && handshake) {
    return " (the TLS handshake failed: does the other end hold a "
           "certificate of this cluster's CA, with the expected role? "
           "docs/security.md)";
  }
  if (!tls_on && (m.find("Socket closed") != std::string::npos ||
                  m.find("Connection reset") != std::string::npos ||
                  m.find("Broken pipe") != std::string::npos)) {
    return " (if it uses TLS, this end needs certificates of its cluster CA: "
           "the cluster file's tls block or --tls-ca/--tls-cert/--tls-key; "
           "docs/security.md)";
  }
  return "";
}

}  // namespace shoal
