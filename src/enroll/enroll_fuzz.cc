// libFuzzer target: the enrolment server's answer to one POST /v1/enroll
// (EnrollService::Handle), the one request a stranger on the network may
// send a CA before it is trusted (docs/security.md, "Enrolment").
//
// One input is [mode: 1 byte][...]:
//   mode even: Authorization is "Bearer " and the secret of a live token
//     for the device pi0, and the rest of the input is the body (the
//     certificate request's PEM), so that the request's parser is reached;
//   mode odd: the input up to its first newline is the Authorization
//     header as sent, and what follows is the body.
//
// The CA, its token file and the service are made once, in a temporary
// folder removed at exit. After an enrolment that succeeds, the issued
// certificate is removed and a new token made, so that the next input
// meets the same state. Refusals are never rate-limited here: an input
// must reach the parser, not the 429.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "enroll/enroll_server.h"
#include "enroll/enroll_tokens.h"
#include "security/certs.h"
#include "security/tls_paths.h"

namespace shoal {
namespace {

struct State {
  std::string dir, secret;
  std::unique_ptr<EnrollService> service;

  State() {
    char tmpl[] = "/tmp/shoal-enroll-fuzz-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) Die("mkdtemp");
    dir = tmpl;
    if (auto ca = InitCa(dir); !ca.ok()) Die(ca.status().message());
    NewToken();
    EnrollServiceOptions o;
    o.dir = dir;
    o.max_refusals_per_minute = 1 << 30;
    o.log = [](const std::string&) {};
    auto s = EnrollService::Create(o);
    if (!s.ok()) Die(s.status().message());
    service = std::move(s).value();
  }

  void NewToken() {
    auto t = CreateEnrollToken(dir, "pi0", 3600, std::time(nullptr));
    if (!t.ok()) Die(t.status().message());
    auto text = ParseEnrollToken(t->text);
    if (!text.ok()) Die(text.status().message());
    secret = text->secret;
  }

  [[noreturn]] static void Die(const std::string& why) {
    std::fprintf(stderr, "enroll_fuzz: cannot set up: %s\n", why.c_str());
    std::abort();
  }
};

// Made on first use and never destroyed (libFuzzer may exit from any
// thread); LLVMFuzzerInitialize removes its folder at exit.
State& Get() {
  static State* state = new State();
  return *state;
}

}  // namespace
}  // namespace shoal

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  shoal::Get();
  std::atexit([] { std::filesystem::remove_all(shoal::Get().dir); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal;
  if (size == 0) return 0;
  State& st = Get();
  const std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string body;  // HttpRequest::body views it
  HttpRequest r;
  r.method = "POST";
  r.path = "/v1/enroll";
  r.remote = "192.0.2.7:40000";
  if (data[0] % 2 == 0) {
    r.headers["authorization"] = "Bearer " + st.secret;
    body = in;
  } else {
    const size_t nl = in.find('\n');
    r.headers["authorization"] = in.substr(0, nl);
    if (nl != std::string::npos) body = in.substr(nl + 1);
  }
  r.body = body;
  const HttpReply reply = st.service->Handle(r);
  if (reply.status == 200) {
    // pi0 has a certificate now: take it back and make a fresh token, so
    // that every input meets a CA that has not issued pi0's yet.
    // The token file too: used tokens stay in it, and a file that grew
    // with every enrolment would slow each input's lookup.
    unlink(IssuedPaths(st.dir, "pi0").cert.c_str());
    unlink(EnrollTokensPath(st.dir).c_str());
    st.NewToken();
  } else if (reply.status == 500) {
    std::fprintf(stderr, "enroll_fuzz: the server failed: %s\n",
                 reply.body.c_str());
    std::abort();
  }
  return 0;
}
