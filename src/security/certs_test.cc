// shoal certs: what init and issue write verifies against the CA with
// OpenSSL's own verifier, keys are their owner's alone, and every file
// that is missing, foreign or readable by others is named.
#include "security/certs.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "security/certs_test_util.h"
#include "security/openssl_util.h"

namespace shoal {
namespace {

using testing::TempCa;

int Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

X509Ptr ReadCert(const std::string& path) {
  auto pem = ReadTextFile(path);
  EXPECT_TRUE(pem.ok()) << pem.status().message();
  auto c = ParseCertPem(pem.ok() ? *pem : "", path);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : nullptr;
}

// OpenSSL's verdict on `cert` with `ca` as the only trusted certificate.
int VerifyError(const std::string& ca, const std::string& cert) {
  X509Ptr ca_cert = ReadCert(ca), leaf = ReadCert(cert);
  if (!ca_cert || !leaf) return -1;
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca_cert.get());
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf.get(), nullptr);
  const int ok = X509_verify_cert(ctx);
  const int err = ok == 1 ? 0 : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok == 1 ? 0 : (err == 0 ? -1 : err);
}

TEST(Certs, InitAndIssueVerifyAgainstTheCa) {
  TempCa ca;
  EXPECT_EQ(Mode(CaKeyPath(ca.dir)), 0600);
  EXPECT_EQ(Mode(ca.dir), 0700);
  IssueOptions o;
  o.sans = {"192.168.1.20", "pi0.local"};
  auto f = IssueCert(ca.dir, "pi0", o);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(Mode(f->key), 0600);
  EXPECT_EQ(VerifyError(CaCertPath(ca.dir), f->cert), 0);
  o.role = TlsRole::kCoordinator;
  o.sans.clear();
  auto c = IssueCert(ca.dir, "laptop", o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(VerifyError(CaCertPath(ca.dir), c->cert), 0);

  X509Ptr dev = ReadCert(f->cert);
  ASSERT_TRUE(dev);
  const auto names = CertDnsNames(dev.get());
  EXPECT_EQ(RoleOfDnsNames(names), TlsRole::kDevice);
  EXPECT_NE(std::find(names.begin(), names.end(), "pi0.local"), names.end());
  EXPECT_EQ(CertCommonName(dev.get()), "pi0");

  auto id = LoadTlsIdentity(IssuedPaths(ca.dir, "laptop"));
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ((*id)->role, TlsRole::kCoordinator);
  EXPECT_EQ((*id)->name, "laptop");
}

TEST(Certs, AnotherCaDoesNotVerify) {
  TempCa a, b;
  ASSERT_TRUE(IssueCert(a.dir, "pi0", {}).ok());
  EXPECT_NE(VerifyError(CaCertPath(b.dir), a.dir + "/pi0.crt"), 0);
  // Loading a's certificate with b's CA names both files.
  TlsPaths p = IssuedPaths(a.dir, "pi0");
  p.ca = CaCertPath(b.dir);
  auto id = LoadTlsIdentity(p);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find(p.cert), std::string::npos)
      << id.status().message();
  EXPECT_NE(id.status().message().find(p.ca), std::string::npos);
}

TEST(Certs, RefusesToReplaceFiles) {
  TempCa ca;
  auto again = InitCa(ca.dir);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("ca."), std::string::npos);
  ASSERT_TRUE(IssueCert(ca.dir, "pi0", {}).ok());
  auto twice = IssueCert(ca.dir, "pi0", {});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("exists already"), std::string::npos)
      << twice.status().message();
}

TEST(Certs, BadInputsAreNamed) {
  TempCa ca;
  auto no_ca = IssueCert(ca.dir + "/none", "pi0", {});
  ASSERT_FALSE(no_ca.ok());
  EXPECT_NE(no_ca.status().message().find(ca.dir + "/none/ca.crt"),
            std::string::npos)
      << no_ca.status().message();
  EXPECT_FALSE(IssueCert(ca.dir, "../pi0", {}).ok());
  EXPECT_FALSE(IssueCert(ca.dir, "ca", {}).ok());
  IssueOptions o;
  o.sans = {"a,DNS:evil"};  // would inject a second name into the extension
  auto bad = IssueCert(ca.dir, "pi1", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("a,DNS:evil"), std::string::npos);
  o.sans = {"shoal-coordinator"};  // a role is --role's alone
  EXPECT_FALSE(IssueCert(ca.dir, "pi1", o).ok());
  o.sans.clear();
  o.days = 0;
  EXPECT_FALSE(IssueCert(ca.dir, "pi1", o).ok());
  EXPECT_FALSE(std::filesystem::exists(ca.dir + "/pi1.key"));
}

TEST(TlsIdentity, EachBadFileIsNamed) {
  TempCa ca;
  ASSERT_TRUE(IssueCert(ca.dir, "pi0", {}).ok());
  ASSERT_TRUE(IssueCert(ca.dir, "pi1", {}).ok());
  const TlsPaths good = IssuedPaths(ca.dir, "pi0");
  auto expect_named = [](const TlsPaths& p, const std::string& file,
                         const std::string& what) {
    auto id = LoadTlsIdentity(p);
    ASSERT_FALSE(id.ok()) << what;
    EXPECT_NE(id.status().message().find(file), std::string::npos)
        << what << ": " << id.status().message();
  };
  TlsPaths p = good;
  p.key = ca.dir + "/pi1.key";
  expect_named(p, p.key, "another certificate's key");
  p = good;
  p.cert = ca.dir + "/missing.crt";
  expect_named(p, p.cert, "a missing certificate");
  p = good;
  p.ca = good.key;  // a key where the CA should be
  expect_named(p, p.ca, "no certificate in the CA file");
  chmod(good.key.c_str(), 0644);
  expect_named(good, good.key, "a key others may read");
  chmod(good.key.c_str(), 0600);
  EXPECT_TRUE(LoadTlsIdentity(good).ok());
  p = good;
  p.key.clear();
  auto partial = LoadTlsIdentity(p);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("private key"), std::string::npos);
}

TEST(TlsIdentity, ACertificateWithoutARoleIsRefused) {
  TempCa ca;
  ASSERT_TRUE(IssueCert(ca.dir, "pi0", {}).ok());
  // A certificate of the same CA that `shoal certs issue` did not make:
  // pi0's key and subject, signed by the CA, without subjectAltNames.
  X509Ptr cert = ReadCert(ca.dir + "/pi0.crt");
  X509Ptr ca_cert = ReadCert(CaCertPath(ca.dir));
  auto key_pem = ReadTextFile(CaKeyPath(ca.dir));
  ASSERT_TRUE(key_pem.ok());
  auto ca_key = ParseKeyPem(*key_pem, "ca.key");
  ASSERT_TRUE(ca_key.ok());
  const int at = X509_get_ext_by_NID(cert.get(), NID_subject_alt_name, -1);
  ASSERT_GE(at, 0);
  X509_EXTENSION_free(X509_delete_ext(cert.get(), at));
  ASSERT_GT(X509_sign(cert.get(), ca_key->get(), EVP_sha256()), 0);
  const std::string path = ca.dir + "/plain.crt";
  std::ofstream(path) << CertToPem(cert.get());
  TlsPaths p = IssuedPaths(ca.dir, "pi0");
  p.cert = path;
  auto id = LoadTlsIdentity(p);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("no shoal role"), std::string::npos)
      << id.status().message();
}

}  // namespace
}  // namespace shoal
