#include "security/csr.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace shoal {

namespace {

struct ReqFree {
  void operator()(X509_REQ* p) const { X509_REQ_free(p); }
};
using ReqPtr = std::unique_ptr<X509_REQ, ReqFree>;
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

}  // namespace

StatusOr<std::string> MakeCsrPem(EVP_PKEY* key, const std::string& name) {
  ReqPtr req(X509_REQ_new());
  X509_REQ_set_version(req.get(), 0);  // v1, the only version there is
  X509_NAME* subject = X509_REQ_get_subject_name(req.get());
  if (X509_NAME_add_entry_by_txt(
          subject, "CN", MBSTRING_UTF8,
          reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1,
          0) != 1 ||
      X509_REQ_set_pubkey(req.get(), key) != 1 ||
      X509_REQ_sign(req.get(), key, EVP_sha256()) <= 0) {
    return Internal("cannot make a certificate request for " + name + ": " +
                    OpenSslErrors());
  }
  BioPtr b(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_REQ(b.get(), req.get());
  char* data = nullptr;
  const long n = BIO_get_mem_data(b.get(), &data);
  return std::string(data, n > 0 ? static_cast<size_t>(n) : 0);
}

StatusOr<CsrContents> ParseCsrPem(std::string_view pem) {
  if (pem.size() > kMaxCsrBytes) {
    return InvalidArgument("the certificate request is " +
                           std::to_string(pem.size()) +
                           " bytes, more than the " +
                           std::to_string(kMaxCsrBytes) + " a request takes");
  }
  ERR_clear_error();
  BioPtr b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  ReqPtr req(PEM_read_bio_X509_REQ(b.get(), nullptr, nullptr, nullptr));
  if (!req) {
    OpenSslErrors();
    return InvalidArgument(
        "the body holds no PEM certificate request (BEGIN CERTIFICATE "
        "REQUEST)");
  }
  CsrContents out;
  // X509_REQ_get_pubkey takes a reference: ours to free.
  out.public_key.reset(X509_REQ_get_pubkey(req.get()));
  if (!out.public_key) {
    OpenSslErrors();
    return InvalidArgument("the certificate request carries no public key");
  }
  if (X509_REQ_verify(req.get(), out.public_key.get()) != 1) {
    OpenSslErrors();
    return InvalidArgument(
        "the certificate request's signature does not verify with the key it "
        "carries: it was not made by the holder of that key");
  }
  char group[64] = {0};
  size_t group_len = 0;
  if (!EVP_PKEY_is_a(out.public_key.get(), "EC") ||
      EVP_PKEY_get_group_name(out.public_key.get(), group, sizeof(group),
                              &group_len) != 1 ||
      std::string(group) != "prime256v1") {
    OpenSslErrors();
    return InvalidArgument(
        "the certificate request's key is not EC P-256, the kind every shoal "
        "certificate holds");
  }
  char cn[256] = {0};
  if (X509_NAME_get_text_by_NID(X509_REQ_get_subject_name(req.get()),
                                NID_commonName, cn, sizeof(cn)) <= 0) {
    OpenSslErrors();
    return InvalidArgument(
        "the certificate request names no device (no common name)");
  }
  out.common_name = cn;
  return out;
}

}  // namespace shoal
