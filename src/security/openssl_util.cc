#include "security/openssl_util.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/read_file.h"

namespace shoal {

namespace {

struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr ReadBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string BioText(BIO* b) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  return std::string(data, n > 0 ? static_cast<size_t>(n) : 0);
}

}  // namespace

std::string OpenSslErrors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out;
}

StatusOr<std::string> ReadTextFile(const std::string& path) {
  // A certificate, key or CA bundle: kilobytes. A path to /dev/zero was
  // read until memory ran out.
  return ReadBoundedFile(path, kMaxPemFileBytes, "PEM file");
}

StatusOr<X509Ptr> ParseCertPem(const std::string& pem,
                               const std::string& origin) {
  ERR_clear_error();
  BioPtr b = ReadBio(pem);
  X509Ptr c(PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr));
  if (!c) {
    return InvalidArgument(
        origin +
        " holds no PEM certificate (BEGIN CERTIFICATE): " + OpenSslErrors());
  }
  return c;
}

StatusOr<PkeyPtr> ParseKeyPem(const std::string& pem,
                              const std::string& origin) {
  ERR_clear_error();
  BioPtr b = ReadBio(pem);
  // A null password callback: an encrypted key fails here rather than
  // prompting on a terminal the worker may not have.
  PkeyPtr k(PEM_read_bio_PrivateKey(
      b.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
  if (!k) {
    return InvalidArgument(
        origin + " holds no unencrypted PEM private key: " + OpenSslErrors());
  }
  return k;
}

std::string CertToPem(X509* cert) {
  BioPtr b(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(b.get(), cert);
  return BioText(b.get());
}

std::string KeyToPem(EVP_PKEY* key) {
  BioPtr b(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(b.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(b.get());
}

std::vector<std::string> CertDnsNames(X509* cert) {
  std::vector<std::string> out;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
    if (g->type != GEN_DNS) continue;
    const ASN1_IA5STRING* s = g->d.dNSName;
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     ASN1_STRING_length(s));
  }
  GENERAL_NAMES_free(names);
  return out;
}

std::string CertCommonName(X509* cert) {
  char buf[256] = {0};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName,
                                buf, sizeof(buf)) < 0) {
    return "";
  }
  return buf;
}

std::string CertSha256Hex(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (X509_digest(cert, EVP_sha256(), md, &n) != 1) return "";
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

}  // namespace shoal
