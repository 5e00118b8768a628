#include "security/revocation.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include "security/openssl_util.h"

namespace shoal {

namespace {

std::string IntegerHex(const ASN1_INTEGER* n) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(n, nullptr);
  if (bn == nullptr) return "";
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

}  // namespace

std::string SerialHex(X509* cert) {
  return IntegerHex(X509_get0_serialNumber(cert));
}

StatusOr<std::set<std::string>> ParseRevokedSerials(const std::string& crl_pem,
                                                    const std::string& ca_pem,
                                                    const std::string& origin) {
  ASSIGN_OR_RETURN(X509Ptr ca, ParseCertPem(ca_pem, "the CA certificate"));
  BIO* bio = BIO_new_mem_buf(crl_pem.data(), static_cast<int>(crl_pem.size()));
  CrlPtr crl(PEM_read_bio_X509_CRL(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  if (!crl) {
    return InvalidArgument(origin +
                           " is not a PEM certificate revocation list (" +
                           OpenSslErrors() + ")");
  }
  if (X509_NAME_cmp(X509_CRL_get_issuer(crl.get()),
                    X509_get_subject_name(ca.get())) != 0) {
    return FailedPrecondition(origin +
                              " was not issued by this cluster's CA (its "
                              "issuer is another name)");
  }
  if (X509_CRL_verify(crl.get(), X509_get0_pubkey(ca.get())) != 1) {
    ERR_clear_error();
    return FailedPrecondition(origin +
                              " is not signed by this cluster's CA: "
                              "make it with `shoal certs revoke`");
  }
  std::set<std::string> out;
  STACK_OF(X509_REVOKED)* revoked = X509_CRL_get_REVOKED(crl.get());
  for (int i = 0; revoked != nullptr && i < sk_X509_REVOKED_num(revoked); ++i) {
    out.insert(IntegerHex(
        X509_REVOKED_get0_serialNumber(sk_X509_REVOKED_value(revoked, i))));
  }
  return out;
}

StatusOr<std::shared_ptr<RevocationList>> RevocationList::Load(
    const std::string& path, const std::string& ca_pem) {
  std::shared_ptr<RevocationList> r(new RevocationList());
  r->path_ = path;
  r->ca_pem_ = ca_pem;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    r->mtime_ = st.st_mtim;
    r->inode_ = st.st_ino;
    r->size_ = st.st_size;
  }
  ASSIGN_OR_RETURN(std::string pem, ReadTextFile(path));
  ASSIGN_OR_RETURN(
      r->serials_,
      ParseRevokedSerials(pem, ca_pem, "certificate revocation list " + path));
  r->checked_ = std::chrono::steady_clock::now();
  return r;
}

void RevocationList::MaybeReload() {
  const auto now = std::chrono::steady_clock::now();
  if (now - checked_ < std::chrono::seconds(1)) return;
  checked_ = now;
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) {
    error_ = "cannot read " + path_ + "; keeping its last list";
    return;
  }
  if (st.st_mtim.tv_sec == mtime_.tv_sec &&
      st.st_mtim.tv_nsec == mtime_.tv_nsec && st.st_ino == inode_ &&
      st.st_size == size_) {
    return;
  }
  auto pem = ReadTextFile(path_);
  if (!pem.ok()) {
    error_ = pem.status().message();
    return;
  }
  auto serials = ParseRevokedSerials(*pem, ca_pem_,
                                     "certificate revocation list " + path_);
  if (!serials.ok()) {
    error_ = serials.status().message();
    return;
  }
  serials_ = std::move(serials).value();
  mtime_ = st.st_mtim;
  inode_ = st.st_ino;
  size_ = st.st_size;
  error_.clear();
}

bool RevocationList::IsRevoked(X509* cert) {
  const std::string serial = SerialHex(cert);
  std::lock_guard<std::mutex> lock(mu_);
  MaybeReload();
  return serials_.count(serial) > 0;
}

bool RevocationList::IsRevokedPem(const std::string& cert_pem) {
  auto cert = ParseCertPem(cert_pem, "the peer's certificate");
  // A peer whose certificate cannot be read back did not get through the
  // handshake: nothing to refuse here.
  if (!cert.ok()) return false;
  return IsRevoked(cert->get());
}

size_t RevocationList::size() {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeReload();
  return serials_.size();
}

std::string RevocationList::last_error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace shoal
