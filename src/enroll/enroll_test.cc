// Enrolment end to end on loopback (docs/security.md, "Enrolment"): a
// board enrols with a one-time token (that its certificate then opens a TLS
// worker to the coordinator is cli/enrolled_worker_test.cc's); a reused,
// expired or unknown token, a request for another name, a server of another
// CA and a garbage request are each refused with a message that says which;
// the request carries the certificate request and the token, never the key.
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "enroll/enroll_client.h"
#include "enroll/enroll_server.h"
#include "enroll/enroll_test_util.h"
#include "enroll/enroll_tokens.h"
#include "security/certs_test_util.h"
#include "security/csr.h"
#include "util/read_file.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

TEST_F(Enrolment, TheRequestCarriesTheCsrAndNeverTheKey) {
  auto p = EnrollAs("pi0", Token("pi0"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(Requests(), 1u);
  const std::string body = bodies_[0];
  auto csr = ParseCsrPem(body);
  ASSERT_TRUE(csr.ok()) << csr.status().message();
  EXPECT_EQ(csr->common_name, "pi0");
  EXPECT_EQ(body.find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(headers_.find("PRIVATE KEY"), std::string::npos);

  // The written key is the request's, and its private number appears in
  // none of the request's bytes, decoded or not.
  auto key_pem = ReadBoundedFile(p->key, 1 << 20, "key");
  ASSERT_TRUE(key_pem.ok());
  auto key = ParseKeyPem(*key_pem, "key");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(EVP_PKEY_eq(key->get(), csr->public_key.get()), 1);
  BIGNUM* priv = nullptr;
  ASSERT_EQ(EVP_PKEY_get_bn_param(key->get(), OSSL_PKEY_PARAM_PRIV_KEY, &priv),
            1);
  std::string scalar(32, '\0');
  BN_bn2binpad(priv, reinterpret_cast<unsigned char*>(scalar.data()), 32);
  BN_free(priv);
  BIO* b = BIO_new_mem_buf(body.data(), static_cast<int>(body.size()));
  X509_REQ* req = PEM_read_bio_X509_REQ(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  ASSERT_NE(req, nullptr);
  unsigned char* der = nullptr;
  const int n = i2d_X509_REQ(req, &der);
  X509_REQ_free(req);
  ASSERT_GT(n, 0);
  const std::string der_text(reinterpret_cast<char*>(der), n);
  OPENSSL_free(der);
  EXPECT_EQ(der_text.find(scalar), std::string::npos);
  EXPECT_EQ(body.find(scalar), std::string::npos);
  EXPECT_EQ(headers_.find(scalar), std::string::npos);
}

TEST_F(Enrolment, ATokenEnrolsOnce) {
  const std::string token = Token("pi0");
  ASSERT_TRUE(EnrollAs("pi0", token).ok());
  auto again = EnrollAs("pi0", token, board_ + "/second");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("the token for pi0 was used already"),
            std::string::npos)
      << again.status().message();
  EXPECT_NE(again.status().message().find("HTTP 401"), std::string::npos);
  EXPECT_FALSE(fs::exists(board_ + "/second/pi0.key"));
}

TEST_F(Enrolment, AnExpiredTokenIsRefused) {
  const int64_t made = std::time(nullptr) - 7200;
  auto r = EnrollAs("pi0", Token("pi0", 3600, made));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the token for pi0 expired at"),
            std::string::npos)
      << r.status().message();
  EXPECT_FALSE(fs::exists(board_ + "/certs/pi0.key"));
  EXPECT_FALSE(fs::exists(ca_.dir + "/pi0.crt"));
}

TEST_F(Enrolment, ARequestForAnotherNameIsRefusedAndTheTokenKept) {
  const std::string token = Token("pi0");
  auto r = EnrollAs("pi1", token);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "the certificate request is for 'pi1', and the token for "
                "'pi0'"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("HTTP 403"), std::string::npos);
  EXPECT_FALSE(fs::exists(ca_.dir + "/pi1.crt"));
  EXPECT_FALSE(fs::exists(board_ + "/certs/pi1.key"));
  // The right board still enrols with it.
  auto ok = EnrollAs("pi0", token);
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

TEST_F(Enrolment, AServerOfAnotherCaIsRefusedBeforeAnythingIsSent) {
  testing::TempCa other;
  const std::string mine = Token("pi0");
  const std::string other_pin = CaSha256(other.dir).value();
  const std::string secret = ParseEnrollToken(mine)->secret;
  auto r = EnrollAs("pi0", secret + "." + other_pin);
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("does not show the CA the token pins"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find(other_pin), std::string::npos) << msg;
  EXPECT_NE(msg.find(service_->ca_sha256()), std::string::npos) << msg;
  EXPECT_EQ(Requests(), 0u);
  EXPECT_FALSE(fs::exists(board_ + "/certs"));
}

TEST_F(Enrolment, GarbageRequestsAreRefusedByName) {
  const std::string secret = ParseEnrollToken(Token("pi0"))->secret;
  httplib::SSLClient cli("127.0.0.1", server_->port());
  cli.enable_server_certificate_verification(false);
  cli.set_read_timeout(5);
  const httplib::Headers auth = {{"Authorization", "Bearer " + secret}};
  auto garbage = cli.Post("/v1/enroll", auth, "not a request", "text/plain");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, 400);
  EXPECT_NE(garbage->body.find("no PEM certificate request"), std::string::npos)
      << garbage->body;

  // A request whose signature is not its key's: another key signed it.
  auto k1 = NewDeviceKey();
  auto k2 = NewDeviceKey();
  ASSERT_TRUE(k1.ok() && k2.ok());
  X509_REQ* req = X509_REQ_new();
  X509_NAME_add_entry_by_txt(
      X509_REQ_get_subject_name(req), "CN", MBSTRING_UTF8,
      reinterpret_cast<const unsigned char*>("pi0"), -1, -1, 0);
  X509_REQ_set_pubkey(req, k1->get());
  X509_REQ_sign(req, k2->get(), EVP_sha256());
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509_REQ(b, req);
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  const std::string forged(data, n);
  BIO_free(b);
  X509_REQ_free(req);
  auto bad_sig = cli.Post("/v1/enroll", auth, forged, "application/pkcs10");
  ASSERT_TRUE(bad_sig);
  EXPECT_EQ(bad_sig->status, 400);
  EXPECT_NE(bad_sig->body.find("signature does not verify"), std::string::npos)
      << bad_sig->body;

  auto no_token = cli.Post("/v1/enroll", forged, "application/pkcs10");
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 401);

  // Answered 413 from its length alone, or the connection closed while
  // the client still wrote: never read, never signed.
  auto huge = cli.Post("/v1/enroll", auth, std::string(64 * 1024, 'A'),
                       "application/pkcs10");
  if (huge) {
    EXPECT_EQ(huge->status, 413);
  }
  EXPECT_FALSE(fs::exists(ca_.dir + "/pi0.crt"));
}

// A request that asks for the coordinator's role and another name in
// its extensions gets what `certs issue` gives a device, and no more.
TEST_F(Enrolment, WhatTheRequestAsksBeyondItsKeyAndNameIsNotCopied) {
  const std::string secret = ParseEnrollToken(Token("pi0"))->secret;
  auto key = NewDeviceKey();
  ASSERT_TRUE(key.ok());
  X509_REQ* req = X509_REQ_new();
  X509_NAME_add_entry_by_txt(
      X509_REQ_get_subject_name(req), "CN", MBSTRING_UTF8,
      reinterpret_cast<const unsigned char*>("pi0"), -1, -1, 0);
  X509_REQ_set_pubkey(req, key->get());
  STACK_OF(X509_EXTENSION)* exts = sk_X509_EXTENSION_new_null();
  sk_X509_EXTENSION_push(
      exts, X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name,
                                "DNS:shoal-coordinator,DNS:evil.example"));
  sk_X509_EXTENSION_push(
      exts,
      X509V3_EXT_conf_nid(nullptr, nullptr, NID_basic_constraints, "CA:TRUE"));
  X509_REQ_add_extensions(req, exts);
  sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  X509_REQ_sign(req, key->get(), EVP_sha256());
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509_REQ(b, req);
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  const std::string pem(data, n);
  BIO_free(b);
  X509_REQ_free(req);

  httplib::SSLClient cli("127.0.0.1", server_->port());
  cli.enable_server_certificate_verification(false);
  cli.set_read_timeout(5);
  auto r = cli.Post("/v1/enroll", {{"Authorization", "Bearer " + secret}}, pem,
                    "application/pkcs10");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto body = nlohmann::json::parse(r->body);
  auto cert = ParseCertPem(body.at("certificate").get<std::string>(), "cert");
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(CertDnsNames(cert->get()),
            std::vector<std::string>{"shoal-device"});
  EXPECT_EQ(X509_check_ca(cert->get()), 0);
  EXPECT_EQ(CertCommonName(cert->get()), "pi0");
}

// Two boards racing with one token: one certificate.
TEST_F(Enrolment, TwoRequestsWithOneTokenGetOneCertificate) {
  const std::string token = Token("pi0");
  StatusOr<TlsPaths> a = InvalidArgument("not run"), b = a;
  std::thread ta([&] { a = EnrollAs("pi0", token, board_ + "/a"); });
  std::thread tb([&] { b = EnrollAs("pi0", token, board_ + "/b"); });
  ta.join();
  tb.join();
  EXPECT_NE(a.ok(), b.ok())
      << a.status().message() << " / " << b.status().message();
  const Status& lost = a.ok() ? b.status() : a.status();
  EXPECT_NE(lost.message().find("the token for pi0 was used already"),
            std::string::npos)
      << lost.message();
}

class FewRefusals : public Enrolment {
 protected:
  FewRefusals() { max_refusals_ = 3; }
};

TEST_F(FewRefusals, AnAddressRefusedTooOftenWaitsAndTheLogStaysShort) {
  const std::string token = Token("pi0");
  const std::string wrong =
      std::string(32, 'a') + "." + ParseEnrollToken(token)->ca_sha256;
  for (int i = 0; i < 3; ++i) {
    auto r = EnrollAs("pi0", wrong);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("not one this CA made"),
              std::string::npos)
        << r.status().message();
  }
  // Even the right token waits now.
  auto r = EnrollAs("pi0", token);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("HTTP 429"), std::string::npos)
      << r.status().message();
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(log_.size(), 1u);  // one line per 10 s
  EXPECT_NE(log_[0].find("refused an enrolment from 127.0.0.1"),
            std::string::npos)
      << log_[0];
}

}  // namespace
}  // namespace shoal
