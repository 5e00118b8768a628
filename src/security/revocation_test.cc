// The CA's revocation list: `shoal certs revoke` signs a list that every
// reader checks against the CA, a revoked certificate is found on it, an
// identity whose own certificate is revoked does not load, and a running
// process sees a new list when the file changes.
#include "security/revocation.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "security/certs.h"
#include "security/certs_test_util.h"
#include "security/openssl_util.h"

namespace shoal {
namespace {

using testing::TempCa;

X509Ptr CertOf(const TempCa& ca, const std::string& name) {
  auto pem = ReadTextFile(IssuedPaths(ca.dir, name).cert);
  EXPECT_TRUE(pem.ok()) << pem.status().message();
  auto cert = ParseCertPem(pem.ok() ? *pem : std::string(), name);
  EXPECT_TRUE(cert.ok()) << cert.status().message();
  return cert.ok() ? std::move(cert).value() : nullptr;
}

TEST(Revocation, RevokeListsTheCertificateAndKeepsEarlierEntries) {
  TempCa ca;
  ASSERT_NE(ca.Issue("d1", TlsRole::kDevice), nullptr);
  ASSERT_NE(ca.Issue("d2", TlsRole::kDevice), nullptr);
  auto r1 = RevokeCert(ca.dir, "d1");
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  EXPECT_EQ(r1->crl, CrlPath(ca.dir));
  EXPECT_EQ(r1->entries, 1);
  EXPECT_EQ(r1->serial, SerialHex(CertOf(ca, "d1").get()));

  auto again = RevokeCert(ca.dir, "d1");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("revoked already"), std::string::npos)
      << again.status().message();

  auto r2 = RevokeCert(ca.dir, "d2");
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(r2->entries, 2);

  auto ca_pem = ReadTextFile(CaCertPath(ca.dir));
  ASSERT_TRUE(ca_pem.ok());
  auto list = RevocationList::Load(CrlPath(ca.dir), *ca_pem);
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ((*list)->size(), 2u);
  EXPECT_TRUE((*list)->IsRevoked(CertOf(ca, "d1").get()));
  EXPECT_TRUE((*list)->IsRevoked(CertOf(ca, "d2").get()));
  ASSERT_NE(ca.Issue("d3", TlsRole::kDevice), nullptr);
  EXPECT_FALSE((*list)->IsRevoked(CertOf(ca, "d3").get()));
}

TEST(Revocation, AListOfAnotherCaOrNoListAtAllIsRefusedNamingTheFile) {
  TempCa ca, other;
  ASSERT_NE(other.Issue("d1", TlsRole::kDevice), nullptr);
  ASSERT_TRUE(RevokeCert(other.dir, "d1").ok());
  auto ca_pem = ReadTextFile(CaCertPath(ca.dir));
  ASSERT_TRUE(ca_pem.ok());
  auto foreign = RevocationList::Load(CrlPath(other.dir), *ca_pem);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find(CrlPath(other.dir)),
            std::string::npos)
      << foreign.status().message();

  const std::string junk = ca.dir + "/junk.pem";
  std::ofstream(junk) << "not a list\n";
  auto bad = RevocationList::Load(junk, *ca_pem);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("revocation list"), std::string::npos)
      << bad.status().message();

  // Revoking what the CA did not issue, or a name it never issued.
  ASSERT_NE(ca.Issue("d1", TlsRole::kDevice), nullptr);
  std::filesystem::copy_file(IssuedPaths(other.dir, "d1").cert,
                             IssuedPaths(ca.dir, "d9").cert);
  auto wrong = RevokeCert(ca.dir, "d9");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("not issued by"), std::string::npos)
      << wrong.status().message();
  EXPECT_FALSE(RevokeCert(ca.dir, "nobody").ok());
}

TEST(Revocation, AnIdentityWhoseCertificateIsRevokedDoesNotLoad) {
  TempCa ca;
  ASSERT_NE(ca.Issue("lost", TlsRole::kDevice), nullptr);
  ASSERT_TRUE(RevokeCert(ca.dir, "lost").ok());
  TlsPaths p = IssuedPaths(ca.dir, "lost");
  p.crl = CrlPath(ca.dir);
  auto id = LoadTlsIdentity(p);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("revoked"), std::string::npos)
      << id.status().message();
}

TEST(Revocation, ARunningListSeesTheFileChangeAndKeepsItsListOverJunk) {
  TempCa ca;
  ASSERT_NE(ca.Issue("d1", TlsRole::kDevice), nullptr);
  ASSERT_NE(ca.Issue("d2", TlsRole::kDevice), nullptr);
  ASSERT_TRUE(RevokeCert(ca.dir, "d1").ok());
  auto ca_pem = ReadTextFile(CaCertPath(ca.dir));
  ASSERT_TRUE(ca_pem.ok());
  auto list = RevocationList::Load(CrlPath(ca.dir), *ca_pem);
  ASSERT_TRUE(list.ok()) << list.status().message();
  X509Ptr d2 = CertOf(ca, "d2");
  EXPECT_FALSE((*list)->IsRevoked(d2.get()));

  ASSERT_TRUE(RevokeCert(ca.dir, "d2").ok());
  // Read again at most once a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_TRUE((*list)->IsRevoked(d2.get()));

  // A file that no longer parses keeps the last good list.
  const std::string saved = *ReadTextFile(CrlPath(ca.dir));
  std::ofstream(CrlPath(ca.dir), std::ios::trunc) << saved.substr(0, 40);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_TRUE((*list)->IsRevoked(d2.get()));
  EXPECT_TRUE((*list)->IsRevoked(CertOf(ca, "d1").get()));
  EXPECT_NE((*list)->last_error(), "");
}

}  // namespace
}  // namespace shoal
