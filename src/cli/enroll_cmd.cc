// `shoal certs enroll NAME` and `shoal-worker enroll NAME`: a board gets
// its device certificate from the CA's enrolment server with a one-time
// token, its key made here and never sent (enroll/enroll_client.h,
// docs/security.md). In the worker's own build too: a board has that alone.
#include <iostream>

#include "cli/commands.h"
#include "enroll/enroll_client.h"

namespace shoal {

void AddEnrollCommand(CLI::App* parent) {
  auto r = std::make_shared<EnrollRequest>();
  r->out_dir = "certs";
  auto timeout_s = std::make_shared<double>(10);
  CLI::App* cmd = parent->add_subcommand(
      "enroll",
      "Get this board's device certificate from `shoal certs serve-enroll` "
      "with a one-time token: the key is made here and never sent");
  cmd->add_option("name", r->name, "This device's name, as the token names it")
      ->required();
  cmd->add_option("--server", r->server,
                  "HOST:PORT of `shoal certs serve-enroll`")
      ->required();
  cmd->add_option("--token", r->token,
                  "The token `shoal certs token NAME` printed (it also pins "
                  "the CA)")
      ->required();
  cmd->add_option("--out", r->out_dir,
                  "Where to write ca.crt, NAME.crt and NAME.key (mode 0600); "
                  "default certs");
  cmd->add_option("--timeout", *timeout_s,
                  "Seconds for each of connecting, sending and reading the "
                  "answer (default 10)")
      ->check(CLI::Range(0.1, 600.0));
  cmd->callback([r, timeout_s] {
    r->timeout_ms = static_cast<int>(*timeout_s * 1000);
    auto p = Enroll(*r);
    if (p.ok()) {
      std::cout << "enrolled " << r->name << ": certificate " << p->cert
                << ", key " << p->key << " (mode 0600, made here), CA " << p->ca
                << "\n"
                << "start the worker with --tls-ca " << p->ca << " --tls-cert "
                << p->cert << " --tls-key " << p->key << "\n";
    }
    throw CommandExit(ReportStatus(p.status()));
  });
}

}  // namespace shoal
