#include "security/certs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "security/device_name.h"
#include "security/new_file.h"
#include "security/openssl_util.h"
#include "security/revocation.h"

namespace shoal {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxDays = 36500;

Status CheckDays(int days) {
  if (days < 1 || days > kMaxDays) {
    return InvalidArgument("--days must be 1 to " + std::to_string(kMaxDays));
  }
  return Status::Ok();
}

// A certificate with a random serial, valid from a minute ago (clocks of
// small boards drift) for `days`, its public key `key`, subject
// CN=cn, OU=ou, O=shoal.
StatusOr<X509Ptr> NewCert(EVP_PKEY* key, const std::string& cn,
                          const std::string& ou, int days) {
  X509Ptr c(X509_new());
  X509_set_version(c.get(), 2);  // v3
  BIGNUM* bn = BN_new();
  const bool serial_ok =
      BN_rand(bn, 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
      BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c.get())) != nullptr;
  BN_free(bn);
  if (!serial_ok) return Internal("cannot draw a serial: " + OpenSslErrors());
  X509_gmtime_adj(X509_getm_notBefore(c.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(c.get()), int64_t{days} * 86400);
  X509_set_pubkey(c.get(), key);
  X509_NAME* name = X509_get_subject_name(c.get());
  auto add = [&](const char* field, const std::string& v) {
    X509_NAME_add_entry_by_txt(
        name, field, MBSTRING_UTF8,
        reinterpret_cast<const unsigned char*>(v.c_str()), -1, -1, 0);
  };
  add("O", "shoal");
  add("OU", ou);
  add("CN", cn);
  return c;
}

Status AddExtension(X509* cert, X509* issuer, int nid,
                    const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) {
    return Internal("cannot add " + std::string(OBJ_nid2sn(nid)) + " " + value +
                    ": " + OpenSslErrors());
  }
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return Status::Ok();
}

Status Sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) <= 0) {
    return Internal("cannot sign the certificate: " + OpenSslErrors());
  }
  return Status::Ok();
}

// "IP:10.0.0.5" or "DNS:pi.local": the entry a --san value becomes. Only
// addresses and host-name characters pass, since the value is spliced into
// OpenSSL's comma-separated extension syntax.
StatusOr<std::string> SanEntry(const std::string& s) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1 ||
      inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return "IP:" + s;
  }
  bool ok = !s.empty() && s.size() <= 253 && s[0] != '-' && s[0] != '.';
  for (char c : s) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9') || c == '-' || c == '.');
  }
  if (!ok) {
    return InvalidArgument("--san '" + s +
                           "' is neither an IP address nor a host name");
  }
  if (s.rfind("shoal-", 0) == 0) {
    return InvalidArgument("--san '" + s +
                           "': names starting with shoal- carry roles; use "
                           "--role");
  }
  return "DNS:" + s;
}

// The CA of `dir`: its certificate and the key that is its own.
struct Ca {
  X509Ptr cert;
  PkeyPtr key;
};

StatusOr<Ca> LoadCa(const std::string& dir) {
  const std::string cert_path = dir + "/ca.crt", key_path = dir + "/ca.key";
  ASSIGN_OR_RETURN(std::string ca_pem, ReadTextFile(cert_path));
  ASSIGN_OR_RETURN(std::string ca_key_pem, ReadTextFile(key_path));
  Ca ca;
  ASSIGN_OR_RETURN(ca.cert,
                   ParseCertPem(ca_pem, "CA certificate " + cert_path));
  ASSIGN_OR_RETURN(ca.key, ParseKeyPem(ca_key_pem, "CA key " + key_path));
  if (X509_check_private_key(ca.cert.get(), ca.key.get()) != 1) {
    ERR_clear_error();
    return FailedPrecondition("CA key " + key_path + " is not the key of " +
                              cert_path);
  }
  return ca;
}

}  // namespace

std::string CaCertPath(const std::string& dir) { return dir + "/ca.crt"; }
std::string CaKeyPath(const std::string& dir) { return dir + "/ca.key"; }
std::string CrlPath(const std::string& dir) { return dir + "/crl.pem"; }

StatusOr<CertFiles> InitCa(const std::string& dir, int days) {
  RETURN_IF_ERROR(CheckDays(days));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Unavailable("cannot create " + dir + ": " + ec.message());
  CertFiles f{CaCertPath(dir), CaKeyPath(dir)};
  for (const auto& p : {f.key, f.cert}) {
    if (fs::exists(p, ec)) {
      return FailedPrecondition(
          p +
          " exists already: this directory has a CA (remove ca.crt and "
          "ca.key to make a new one, which every issued certificate "
          "would then need again)");
    }
  }
  ASSIGN_OR_RETURN(PkeyPtr key, NewDeviceKey());
  // A random tag in the name tells two clusters' CAs apart in messages.
  unsigned char tag[4];
  RAND_bytes(tag, sizeof(tag));
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%02x%02x%02x%02x", tag[0], tag[1], tag[2],
                tag[3]);
  ASSIGN_OR_RETURN(
      X509Ptr cert,
      NewCert(key.get(), std::string("shoal cluster CA ") + hex, "ca", days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_basic_constraints,
                               "critical,CA:TRUE,pathlen:0"));
  RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_key_usage,
                               "critical,keyCertSign,cRLSign"));
  RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(Sign(cert.get(), key.get()));
  chmod(dir.c_str(), 0700);
  RETURN_IF_ERROR(WriteNewFile(f.key, KeyToPem(key.get()), 0600));
  RETURN_IF_ERROR(WriteNewFile(f.cert, CertToPem(cert.get()), 0644));
  return f;
}

namespace {

// NAME's certificate for `key`, signed by the CA: what `issue` writes and
// what an enrolling board receives, one function so the two cannot differ.
StatusOr<X509Ptr> SignMemberCert(const Ca& ca, EVP_PKEY* key,
                                 const std::string& name,
                                 const IssueOptions& o) {
  std::string san = "DNS:" + RoleDnsName(o.role);
  for (const auto& s : o.sans) {
    ASSIGN_OR_RETURN(std::string e, SanEntry(s));
    san += "," + e;
  }
  X509* issuer = ca.cert.get();
  ASSIGN_OR_RETURN(X509Ptr cert, NewCert(key, name, RoleName(o.role), o.days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_basic_constraints,
                               "critical,CA:FALSE"));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_key_usage,
                               "critical,digitalSignature,keyAgreement"));
  // Workers are servers to the coordinator and clients of their peers.
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_ext_key_usage,
                               "serverAuth,clientAuth"));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_authority_key_identifier,
                               "keyid:always"));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_subject_alt_name, san));
  RETURN_IF_ERROR(Sign(cert.get(), ca.key.get()));
  return cert;
}

Status CheckIssuable(const std::string& dir, const std::string& name,
                     const IssueOptions& o) {
  RETURN_IF_ERROR(CheckDays(o.days));
  // The name becomes file names in `dir`.
  RETURN_IF_ERROR(CheckDeviceName(name));
  if (name == "ca") {
    return InvalidArgument("'ca' is the CA's own file name in " + dir);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<PkeyPtr> NewDeviceKey() {
  PkeyPtr k(EVP_EC_gen("P-256"));
  if (!k) return Internal("cannot make an EC P-256 key: " + OpenSslErrors());
  return k;
}

StatusOr<CertFiles> IssueCert(const std::string& dir, const std::string& name,
                              const IssueOptions& o) {
  RETURN_IF_ERROR(CheckIssuable(dir, name, o));
  for (const auto& s : o.sans) RETURN_IF_ERROR(SanEntry(s).status());
  const TlsPaths p = IssuedPaths(dir, name);
  ASSIGN_OR_RETURN(Ca ca, LoadCa(dir));
  std::error_code ec;
  for (const auto& f : {p.key, p.cert}) {
    if (fs::exists(f, ec)) {
      return FailedPrecondition(f + " exists already: remove " + p.cert +
                                " and " + p.key + " to issue " + name +
                                " again");
    }
  }
  ASSIGN_OR_RETURN(PkeyPtr key, NewDeviceKey());
  ASSIGN_OR_RETURN(X509Ptr cert, SignMemberCert(ca, key.get(), name, o));
  RETURN_IF_ERROR(WriteNewFile(p.key, KeyToPem(key.get()), 0600));
  Status s = WriteNewFile(p.cert, CertToPem(cert.get()), 0644);
  if (!s.ok()) {
    unlink(p.key.c_str());  // a key without its certificate serves nothing
    return s;
  }
  return CertFiles{p.cert, p.key};
}

StatusOr<std::string> IssueCertForKey(const std::string& dir,
                                      const std::string& name, EVP_PKEY* key,
                                      const IssueOptions& o) {
  RETURN_IF_ERROR(CheckIssuable(dir, name, o));
  ASSIGN_OR_RETURN(Ca ca, LoadCa(dir));
  const std::string path = IssuedPaths(dir, name).cert;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    return FailedPrecondition(
        path + " exists already: " + name +
        " has a certificate (to give it a new one, `shoal certs revoke " +
        name + "` if its key may be lost, then remove " + path + ")");
  }
  ASSIGN_OR_RETURN(X509Ptr cert, SignMemberCert(ca, key, name, o));
  const std::string pem = CertToPem(cert.get());
  RETURN_IF_ERROR(WriteNewFile(path, pem, 0644));
  return pem;
}

StatusOr<std::string> CaSha256(const std::string& dir) {
  ASSIGN_OR_RETURN(Ca ca, LoadCa(dir));
  return CertSha256Hex(ca.cert.get());
}

StatusOr<PemIdentity> IssueEnrollServerCert(const std::string& dir) {
  ASSIGN_OR_RETURN(Ca ca, LoadCa(dir));
  ASSIGN_OR_RETURN(PkeyPtr key, NewDeviceKey());
  X509* issuer = ca.cert.get();
  // As long as a device certificate: the key lives only in this process's
  // memory and dies with it.
  ASSIGN_OR_RETURN(X509Ptr cert,
                   NewCert(key.get(), "shoal enrolment", "enroll", 3650));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_basic_constraints,
                               "critical,CA:FALSE"));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_key_usage,
                               "critical,digitalSignature,keyAgreement"));
  // A server only, and no role: it opens no worker and no coordinator.
  RETURN_IF_ERROR(
      AddExtension(cert.get(), issuer, NID_ext_key_usage, "serverAuth"));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_authority_key_identifier,
                               "keyid:always"));
  RETURN_IF_ERROR(AddExtension(cert.get(), issuer, NID_subject_alt_name,
                               std::string("DNS:") + kEnrollServerDnsName));
  RETURN_IF_ERROR(Sign(cert.get(), ca.key.get()));
  return PemIdentity{CertToPem(issuer), CertToPem(cert.get()),
                     KeyToPem(key.get())};
}

namespace {

struct Asn1TimeFree {
  void operator()(ASN1_TIME* p) const { ASN1_TIME_free(p); }
};

}  // namespace

StatusOr<Revoked> RevokeCert(const std::string& dir, const std::string& name,
                             int days) {
  RETURN_IF_ERROR(CheckDays(days));
  RETURN_IF_ERROR(CheckDeviceName(name));
  ASSIGN_OR_RETURN(Ca ca, LoadCa(dir));
  const std::string cert_path = IssuedPaths(dir, name).cert;
  ASSIGN_OR_RETURN(std::string cert_pem, ReadTextFile(cert_path));
  ASSIGN_OR_RETURN(X509Ptr cert,
                   ParseCertPem(cert_pem, "certificate " + cert_path));
  if (X509_verify(cert.get(), X509_get0_pubkey(ca.cert.get())) != 1) {
    ERR_clear_error();
    return FailedPrecondition("certificate " + cert_path +
                              " was not issued by the CA in " + dir);
  }
  Revoked out;
  out.crl = CrlPath(dir);
  out.serial = SerialHex(cert.get());

  CrlPtr crl(X509_CRL_new());
  X509_CRL_set_version(crl.get(), 1);  // v2: entries may carry extensions
  X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(ca.cert.get()));
  // The entries of the list there now, checked as any reader checks it.
  std::error_code ec;
  if (fs::exists(out.crl, ec)) {
    ASSIGN_OR_RETURN(std::string old_pem, ReadTextFile(out.crl));
    ASSIGN_OR_RETURN(
        std::set<std::string> old,
        ParseRevokedSerials(old_pem, CertToPem(ca.cert.get()),
                            "certificate revocation list " + out.crl));
    if (old.count(out.serial) > 0) {
      return FailedPrecondition(name + "'s certificate (serial " + out.serial +
                                ") is revoked already in " + out.crl);
    }
    BIO* bio =
        BIO_new_mem_buf(old_pem.data(), static_cast<int>(old_pem.size()));
    CrlPtr prev(PEM_read_bio_X509_CRL(bio, nullptr, nullptr, nullptr));
    BIO_free(bio);
    STACK_OF(X509_REVOKED)* entries =
        prev ? X509_CRL_get_REVOKED(prev.get()) : nullptr;
    for (int i = 0; entries != nullptr && i < sk_X509_REVOKED_num(entries);
         ++i) {
      X509_CRL_add0_revoked(
          crl.get(), X509_REVOKED_dup(sk_X509_REVOKED_value(entries, i)));
    }
  }
  X509_REVOKED* entry = X509_REVOKED_new();
  std::unique_ptr<ASN1_TIME, Asn1TimeFree> now(X509_gmtime_adj(nullptr, 0));
  std::unique_ptr<ASN1_TIME, Asn1TimeFree> next(
      X509_gmtime_adj(nullptr, int64_t{days} * 86400));
  X509_REVOKED_set_serialNumber(entry, X509_get_serialNumber(cert.get()));
  X509_REVOKED_set_revocationDate(entry, now.get());
  X509_CRL_add0_revoked(crl.get(), entry);
  X509_CRL_set1_lastUpdate(crl.get(), now.get());
  X509_CRL_set1_nextUpdate(crl.get(), next.get());
  X509_CRL_sort(crl.get());
  if (X509_CRL_sign(crl.get(), ca.key.get(), EVP_sha256()) <= 0) {
    return Internal("cannot sign the revocation list: " + OpenSslErrors());
  }
  out.entries = sk_X509_REVOKED_num(X509_CRL_get_REVOKED(crl.get()));

  BIO* mem = BIO_new(BIO_s_mem());
  PEM_write_bio_X509_CRL(mem, crl.get());
  char* data = nullptr;
  const long n = BIO_get_mem_data(mem, &data);
  const std::string pem(data, static_cast<size_t>(n));
  BIO_free(mem);
  // Written beside and renamed: a reader (a worker reloading it) sees the
  // old list or the new one, never half of one.
  const std::string tmp = out.crl + ".new";
  unlink(tmp.c_str());
  RETURN_IF_ERROR(WriteNewFile(tmp, pem, 0644));
  if (rename(tmp.c_str(), out.crl.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    unlink(tmp.c_str());
    return Unavailable("cannot write " + out.crl + ": " + why);
  }
  return out;
}

}  // namespace shoal
