// Test helpers: a fresh directory holding a cluster CA and the
// certificates a test asks for, removed when the test ends.
#ifndef SHOAL_SECURITY_CERTS_TEST_UTIL_H_
#define SHOAL_SECURITY_CERTS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "security/certs.h"
#include "security/tls_identity.h"

namespace shoal::testing {

struct TempCa {
  std::string dir;

  TempCa() {
    char tmpl[] = "/tmp/shoal-certs-test-XXXXXX";
    dir = mkdtemp(tmpl);
    auto ca = InitCa(dir);
    EXPECT_TRUE(ca.ok()) << ca.status().message();
  }
  ~TempCa() { std::filesystem::remove_all(dir); }

  // Issues NAME with `role` and loads it; null (and a failed test) on error.
  std::shared_ptr<const TlsIdentity> Issue(const std::string& name,
                                           TlsRole role) {
    IssueOptions o;
    o.role = role;
    auto f = IssueCert(dir, name, o);
    EXPECT_TRUE(f.ok()) << f.status().message();
    return Load(name);
  }

  // Loads NAME's files, with the CA's revocation list once there is one.
  std::shared_ptr<const TlsIdentity> Load(const std::string& name) {
    TlsPaths p = IssuedPaths(dir, name);
    if (std::filesystem::exists(CrlPath(dir))) p.crl = CrlPath(dir);
    auto id = LoadTlsIdentity(p);
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? id.value() : nullptr;
  }
};

}  // namespace shoal::testing

#endif  // SHOAL_SECURITY_CERTS_TEST_UTIL_H_
