// Enrolment tokens: their text, their lifetime, and the CA's file that
// keeps them hashed (enroll/enroll_tokens.h).
#include "enroll/enroll_tokens.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>

#include "security/certs_test_util.h"
#include "util/read_file.h"

namespace shoal {
namespace {

using testing::TempCa;

TEST(EnrollTokens, TextCarriesTheSecretAndTheCaPin) {
  TempCa ca;
  auto t = CreateEnrollToken(ca.dir, "pi0", 3600, std::time(nullptr));
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto parsed = ParseEnrollToken(t->text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->secret.size(), 32u);
  EXPECT_EQ(parsed->ca_sha256, CaSha256(ca.dir).value());
  EXPECT_EQ(FormatEnrollToken(*parsed), t->text);
}

TEST(EnrollTokens, GarbageIsRefusedWithoutBeingRepeated) {
  for (const std::string& bad : std::vector<std::string>{
           "", "abc", "0123456789abcdef0123456789abcdef", "x.y",
           std::string(32, 'g') + "." + std::string(64, 'a'),
           std::string(32, 'a') + "." + std::string(63, 'a')}) {
    auto t = ParseEnrollToken(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find("not an enrolment token"),
              std::string::npos);
    if (bad.size() > 3) {
      EXPECT_EQ(t.status().message().find(bad), std::string::npos);
    }
  }
}

TEST(EnrollTokens, TtlIsOneMinuteToSevenDays) {
  EXPECT_EQ(ParseTokenTtl("1h").value(), 3600);
  EXPECT_EQ(ParseTokenTtl("30m").value(), 1800);
  EXPECT_EQ(ParseTokenTtl("90s").value(), 90);
  EXPECT_EQ(ParseTokenTtl("7d").value(), 7 * 86400);
  for (const char* bad : {"8d", "30s", "1", "h", "1.5h", "-1h", "1w"}) {
    EXPECT_FALSE(ParseTokenTtl(bad).ok()) << bad;
  }
}

TEST(EnrollTokens, FileKeepsOnlyAHashAndIsTheOwnersAlone) {
  TempCa ca;
  auto t = CreateEnrollToken(ca.dir, "pi0", 3600, std::time(nullptr));
  ASSERT_TRUE(t.ok()) << t.status().message();
  const std::string secret = ParseEnrollToken(t->text)->secret;
  const std::string path = EnrollTokensPath(ca.dir);
  auto text = ReadBoundedFile(path, 1 << 20, "tokens");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->find(secret), std::string::npos);
  EXPECT_NE(text->find("\"pi0\""), std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(EnrollTokens, FindRefusesUnknownUsedAndExpiredTokens) {
  TempCa ca;
  const int64_t now = std::time(nullptr);
  auto fresh = CreateEnrollToken(ca.dir, "pi0", 3600, now);
  auto old = CreateEnrollToken(ca.dir, "pi1", 3600, now - 7200);
  ASSERT_TRUE(fresh.ok() && old.ok());
  auto f = EnrollTokenFile::Open(ca.dir);
  ASSERT_TRUE(f.ok()) << f.status().message();
  auto found = f.value()->Find(ParseEnrollToken(fresh->text)->secret, now);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found.value()->name, "pi0");

  auto expired = f.value()->Find(ParseEnrollToken(old->text)->secret, now);
  ASSERT_FALSE(expired.ok());
  EXPECT_NE(expired.status().message().find("the token for pi1 expired"),
            std::string::npos)
      << expired.status().message();

  auto unknown = f.value()->Find(std::string(32, 'a'), now);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);

  found.value()->used = now;
  found.value()->used_by = "10.0.0.9";
  ASSERT_TRUE(f.value()->Save(now).ok());
  f.value().reset();
  auto again = EnrollTokenFile::Open(ca.dir);
  ASSERT_TRUE(again.ok());
  auto used = again.value()->Find(ParseEnrollToken(fresh->text)->secret, now);
  ASSERT_FALSE(used.ok());
  EXPECT_NE(used.status().message().find("the token for pi0 was used already"),
            std::string::npos)
      << used.status().message();
  EXPECT_NE(used.status().message().find("10.0.0.9"), std::string::npos);
}

TEST(EnrollTokens, RefusedForANameWithACertificateOrWithoutACa) {
  TempCa ca;
  IssueOptions o;
  ASSERT_TRUE(IssueCert(ca.dir, "pi0", o).ok());
  auto t = CreateEnrollToken(ca.dir, "pi0", 3600, std::time(nullptr));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("pi0.crt exists already"),
            std::string::npos)
      << t.status().message();
  EXPECT_FALSE(
      CreateEnrollToken(ca.dir, "../x", 3600, std::time(nullptr)).ok());
  auto none = CreateEnrollToken("/nonexistent-ca-dir", "pi1", 3600, 0);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("/nonexistent-ca-dir/ca.crt"),
            std::string::npos)
      << none.status().message();
}

}  // namespace
}  // namespace shoal
