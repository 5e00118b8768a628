#include "security/certs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "security/device_name.h"
#include "security/openssl_util.h"

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

// Writes a new file; never replaces one (O_EXCL), so a CA or a device's key
// is not lost to a repeated command.
Status WriteNewFile(const std::string& path, const std::string& text,
                    mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return FailedPrecondition(path +
                                " exists already: remove it to make a new one");
    }
    return Unavailable("cannot create " + path + ": " + std::strerror(errno));
  }
  // The umask may have dropped bits, never added: set exactly.
  bool ok = fchmod(fd, mode) == 0;
  size_t done = 0;
  while (ok && done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  const int err = errno;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(path.c_str());
    return Unavailable("cannot write " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

StatusOr<PkeyPtr> NewKey() {
  PkeyPtr k(EVP_EC_gen("P-256"));
  if (!k) return Internal("cannot make an EC P-256 key: " + OpenSslErrors());
  return k;
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

}  // namespace

std::string CaCertPath(const std::string& dir) { return dir + "/ca.crt"; }
std::string CaKeyPath(const std::string& dir) { return dir + "/ca.key"; }

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
  ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
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

StatusOr<CertFiles> IssueCert(const std::string& dir, const std::string& name,
                              const IssueOptions& o) {
  RETURN_IF_ERROR(CheckDays(o.days));
  // The name becomes file names in `dir`.
  RETURN_IF_ERROR(CheckDeviceName(name));
  if (name == "ca") {
    return InvalidArgument("'ca' is the CA's own file name in " + dir);
  }
  std::string san = "DNS:" + RoleDnsName(o.role);
  for (const auto& s : o.sans) {
    ASSIGN_OR_RETURN(std::string e, SanEntry(s));
    san += "," + e;
  }
  const TlsPaths p = IssuedPaths(dir, name);
  ASSIGN_OR_RETURN(std::string ca_pem, ReadTextFile(p.ca));
  ASSIGN_OR_RETURN(std::string ca_key_pem, ReadTextFile(CaKeyPath(dir)));
  ASSIGN_OR_RETURN(X509Ptr ca, ParseCertPem(ca_pem, "CA certificate " + p.ca));
  ASSIGN_OR_RETURN(PkeyPtr ca_key,
                   ParseKeyPem(ca_key_pem, "CA key " + CaKeyPath(dir)));
  if (X509_check_private_key(ca.get(), ca_key.get()) != 1) {
    ERR_clear_error();
    return FailedPrecondition("CA key " + CaKeyPath(dir) +
                              " is not the key of " + p.ca);
  }
  std::error_code ec;
  for (const auto& f : {p.key, p.cert}) {
    if (fs::exists(f, ec)) {
      return FailedPrecondition(f + " exists already: remove " + p.cert +
                                " and " + p.key + " to issue " + name +
                                " again");
    }
  }
  ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  ASSIGN_OR_RETURN(X509Ptr cert,
                   NewCert(key.get(), name, RoleName(o.role), o.days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_basic_constraints,
                               "critical,CA:FALSE"));
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_key_usage,
                               "critical,digitalSignature,keyAgreement"));
  // Workers are servers to the coordinator and clients of their peers.
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_ext_key_usage,
                               "serverAuth,clientAuth"));
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(),
                               NID_authority_key_identifier, "keyid:always"));
  RETURN_IF_ERROR(
      AddExtension(cert.get(), ca.get(), NID_subject_alt_name, san));
  RETURN_IF_ERROR(Sign(cert.get(), ca_key.get()));
  RETURN_IF_ERROR(WriteNewFile(p.key, KeyToPem(key.get()), 0600));
  Status s = WriteNewFile(p.cert, CertToPem(cert.get()), 0644);
  if (!s.ok()) {
    unlink(p.key.c_str());  // a key without its certificate serves nothing
    return s;
  }
  return CertFiles{p.cert, p.key};
}

}  // namespace shoal
