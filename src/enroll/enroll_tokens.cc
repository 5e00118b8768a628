#include "enroll/enroll_tokens.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "security/certs.h"
#include "security/device_name.h"
#include "security/new_file.h"
#include "util/read_file.h"

namespace shoal {

namespace {

constexpr size_t kSecretBytes = 16;
constexpr int64_t kMaxTokenFileBytes = int64_t{1} << 20;
constexpr int64_t kKeepExpiredS = 86400;

std::string Hex(const unsigned char* p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return out;
}

bool IsLowerHex(const std::string& s, size_t len) {
  if (s.size() != len) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string Sha256Hex(const std::string& text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(text.data(), text.size(), md, &n, EVP_sha256(), nullptr);
  return Hex(md, n);
}

}  // namespace

std::string FormatTokenTime(int64_t unix_s) {
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

StatusOr<EnrollTokenText> ParseEnrollToken(const std::string& text) {
  const size_t dot = text.find('.');
  EnrollTokenText t;
  if (dot != std::string::npos) {
    t.secret = text.substr(0, dot);
    t.ca_sha256 = text.substr(dot + 1);
  }
  // The text is a secret: messages describe it and never repeat it.
  if (dot == std::string::npos || !IsLowerHex(t.secret, 2 * kSecretBytes) ||
      !IsLowerHex(t.ca_sha256, 64)) {
    return InvalidArgument(
        "--token is not an enrolment token: `shoal certs token NAME` prints "
        "one, 32 hex digits, a dot and the CA's 64-digit SHA-256 (" +
        std::to_string(text.size()) + " characters given)");
  }
  return t;
}

std::string FormatEnrollToken(const EnrollTokenText& t) {
  return t.secret + "." + t.ca_sha256;
}

std::string EnrollTokensPath(const std::string& dir) {
  return dir + "/enroll-tokens.json";
}

StatusOr<int64_t> ParseTokenTtl(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  const std::string unit = text.substr(digits);
  int64_t scale = unit == "s"   ? 1
                  : unit == "m" ? 60
                  : unit == "h" ? 3600
                  : unit == "d" ? 86400
                                : 0;
  if (digits == 0 || digits > 6 || scale == 0) {
    return InvalidArgument("--ttl '" + text +
                           "' is not a duration: a whole number and s, m, h "
                           "or d (e.g. 30m, 1h, 2d)");
  }
  const int64_t s = std::stoll(text.substr(0, digits)) * scale;
  if (s < 60 || s > 7 * 86400) {
    return InvalidArgument("--ttl '" + text +
                           "': a token lives one minute to seven days");
  }
  return s;
}

StatusOr<std::unique_ptr<EnrollTokenFile>> EnrollTokenFile::Open(
    const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return Unavailable("cannot open the CA's directory " + dir + ": " +
                       std::strerror(errno));
  }
  // Held for the few milliseconds a request or `certs token` takes; a
  // holder that never lets go is reported rather than waited on for ever.
  bool locked = false;
  for (int i = 0; i < 100 && !locked; ++i) {
    locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!locked) {
    close(fd);
    return Unavailable("another process has held the lock of " +
                       EnrollTokensPath(dir) + " for 5 s");
  }
  std::unique_ptr<EnrollTokenFile> f(new EnrollTokenFile(dir, fd));
  const std::string path = EnrollTokensPath(dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return f;
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kMaxTokenFileBytes,
                                                     "enrolment token file"));
  try {
    const auto j = nlohmann::json::parse(text);
    for (const auto& t : j.at("tokens")) {
      EnrollTokenRecord r;
      r.name = t.at("name").get<std::string>();
      r.secret_sha256 = t.at("secret_sha256").get<std::string>();
      r.created = t.at("created").get<int64_t>();
      r.expires = t.at("expires").get<int64_t>();
      r.used = t.value("used", int64_t{0});
      r.used_by = t.value("used_by", std::string());
      f->tokens_.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    return InvalidArgument(path + " is not an enrolment token file (" +
                           e.what() +
                           "): remove it, and make the tokens "
                           "not yet used again");
  }
  return f;
}

EnrollTokenFile::~EnrollTokenFile() {
  flock(lock_fd_, LOCK_UN);
  close(lock_fd_);
}

StatusOr<EnrollTokenRecord*> EnrollTokenFile::Find(const std::string& secret,
                                                   int64_t now) {
  const std::string h = Sha256Hex(secret);
  EnrollTokenRecord* found = nullptr;
  // Every record compared, each in constant time: how long this takes
  // says nothing of how near a guess came.
  for (auto& r : tokens_) {
    if (r.secret_sha256.size() == h.size() &&
        CRYPTO_memcmp(r.secret_sha256.data(), h.data(), h.size()) == 0) {
      found = &r;
    }
  }
  if (found == nullptr) {
    return NotFound(
        "the token is not one this CA made (or it was removed): make one "
        "with `shoal certs token NAME`");
  }
  if (found->used != 0) {
    return FailedPrecondition(
        "the token for " + found->name + " was used already, at " +
        FormatTokenTime(found->used) + " by " + found->used_by +
        ": a token enrols one board once");
  }
  if (now >= found->expires) {
    return FailedPrecondition("the token for " + found->name + " expired at " +
                              FormatTokenTime(found->expires) +
                              ": make a new one with `shoal certs token " +
                              found->name + "`");
  }
  return found;
}

Status EnrollTokenFile::Save(int64_t now) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : tokens_) {
    if (r.expires + kKeepExpiredS < now) continue;
    nlohmann::json t = {{"name", r.name},
                        {"secret_sha256", r.secret_sha256},
                        {"created", r.created},
                        {"expires", r.expires}};
    if (r.used != 0) {
      t["used"] = r.used;
      t["used_by"] = r.used_by;
    }
    list.push_back(std::move(t));
  }
  const std::string path = EnrollTokensPath(dir_);
  const std::string tmp = path + ".new";
  unlink(tmp.c_str());
  RETURN_IF_ERROR(
      WriteNewFile(tmp, nlohmann::json{{"tokens", list}}.dump(1) + "\n", 0600));
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    unlink(tmp.c_str());
    return Unavailable("cannot write " + path + ": " + why);
  }
  return Status::Ok();
}

StatusOr<NewEnrollToken> CreateEnrollToken(const std::string& dir,
                                           const std::string& name,
                                           int64_t ttl_s, int64_t now) {
  RETURN_IF_ERROR(CheckDeviceName(name));
  if (name == "ca") {
    return InvalidArgument("'ca' is the CA's own file name in " + dir);
  }
  // Loads the CA and checks its key: a token for a CA that cannot sign
  // would fail only on the board.
  ASSIGN_OR_RETURN(std::string ca_sha256, CaSha256(dir));
  const std::string cert = IssuedPaths(dir, name).cert;
  std::error_code ec;
  if (std::filesystem::exists(cert, ec)) {
    return FailedPrecondition(
        cert + " exists already: " + name +
        " has a certificate (to give it a new one, `shoal certs revoke " +
        name + "` if its key may be lost, then remove " + cert + ")");
  }
  unsigned char secret[kSecretBytes];
  if (RAND_bytes(secret, sizeof(secret)) != 1) {
    return Internal("cannot draw a random token");
  }
  EnrollTokenText text{Hex(secret, sizeof(secret)), ca_sha256};
  ASSIGN_OR_RETURN(auto file, EnrollTokenFile::Open(dir));
  EnrollTokenRecord r;
  r.name = name;
  r.secret_sha256 = Sha256Hex(text.secret);
  r.created = now;
  r.expires = now + ttl_s;
  file->tokens().push_back(r);
  RETURN_IF_ERROR(file->Save(now));
  return NewEnrollToken{FormatEnrollToken(text), r.expires};
}

}  // namespace shoal
