// One-time enrolment tokens (`shoal certs token`, docs/security.md,
// "Enrolment"). A token lets one board, named when the token is made, get
// one device certificate from the CA: the board proves it holds the secret
// and sends a certificate request, and the CA signs it. The CA keeps only
// the secret's SHA-256, with the name and the expiry, in
// DIR/enroll-tokens.json (mode 0600). The text the user carries to the
// board also pins the CA: SECRET.CA_SHA256, so the board can check the
// server before it has the CA, as kubeadm's discovery token CA hash does.
#ifndef SHOAL_ENROLL_ENROLL_TOKENS_H_
#define SHOAL_ENROLL_ENROLL_TOKENS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

// What a token's text holds: the secret (32 hex digits, 128 random bits)
// and the lower-case hex SHA-256 of the CA's certificate.
struct EnrollTokenText {
  std::string secret, ca_sha256;
};

// "SECRET.CA_SHA256"; errors say what part is wrong, never quote the text.
StatusOr<EnrollTokenText> ParseEnrollToken(const std::string& text);
std::string FormatEnrollToken(const EnrollTokenText& t);

// "2026-11-28 21:30:00 UTC": a token's times in messages.
std::string FormatTokenTime(int64_t unix_s);

// DIR/enroll-tokens.json.
std::string EnrollTokensPath(const std::string& dir);

// --ttl: "90s", "30m", "1h", "2d"; one minute to seven days.
StatusOr<int64_t> ParseTokenTtl(const std::string& text);

struct NewEnrollToken {
  std::string text;     // what the board is given
  int64_t expires = 0;  // Unix seconds
};

// Makes a token for NAME, valid `ttl_s` seconds from `now` (Unix
// seconds), and adds it to DIR's token file. Refuses when the CA in `dir`
// is missing or NAME has a certificate there already (DIR/NAME.crt).
StatusOr<NewEnrollToken> CreateEnrollToken(const std::string& dir,
                                           const std::string& name,
                                           int64_t ttl_s, int64_t now);

struct EnrollTokenRecord {
  std::string name;
  std::string secret_sha256;  // hex
  int64_t created = 0, expires = 0;
  int64_t used = 0;     // when it issued its certificate; 0: not yet
  std::string used_by;  // the address that enrolled with it
};

// DIR's token file, read and held under an exclusive lock (flock on DIR)
// while this object lives, so that two requests with one token, or a
// request and `certs token`, never both change it.
class EnrollTokenFile {
 public:
  static StatusOr<std::unique_ptr<EnrollTokenFile>> Open(
      const std::string& dir);
  ~EnrollTokenFile();

  // The token whose secret is `secret`, compared in constant time with
  // every stored hash. NotFound when none is; FailedPrecondition, naming
  // its device, when it was used or has expired at `now`.
  StatusOr<EnrollTokenRecord*> Find(const std::string& secret, int64_t now);

  std::vector<EnrollTokenRecord>& tokens() { return tokens_; }

  // Writes the file whole (beside it, then renamed; mode 0600), leaving
  // out tokens that expired more than a day before `now`.
  Status Save(int64_t now);

 private:
  EnrollTokenFile(std::string dir, int lock_fd)
      : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::string dir_;
  int lock_fd_;
  std::vector<EnrollTokenRecord> tokens_;
};

}  // namespace shoal

#endif  // SHOAL_ENROLL_ENROLL_TOKENS_H_
