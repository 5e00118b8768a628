// `shoal certs init DIR`, `shoal certs issue NAME --dir DIR` and `shoal
// certs revoke NAME --dir DIR`: a cluster's own CA, the certificates its
// devices and coordinators show, and the list of those it turned off
// (security/certs.h, docs/security.md). `certs token`, `certs
// serve-enroll` and `certs enroll` (cli/enroll_cmd.cc) give a board its
// certificate without its key leaving it (enroll/).
#include <signal.h>

#include <ctime>
#include <iostream>

#include "cli/commands.h"
#include "enroll/enroll_server.h"
#include "enroll/enroll_tokens.h"
#include "security/certs.h"

namespace shoal {

namespace {

struct IssueArgs {
  std::string name, dir = "certs", role = "device";
  std::vector<std::string> sans;
  int days = 3650;
};

Status RunIssue(const IssueArgs& a) {
  IssueOptions o;
  ASSIGN_OR_RETURN(o.role, ParseRole(a.role));
  o.sans = a.sans;
  o.days = a.days;
  ASSIGN_OR_RETURN(CertFiles f, IssueCert(a.dir, a.name, o));
  std::cout << "issued " << a.name << " (" << RoleName(o.role)
            << "): certificate " << f.cert << ", key " << f.key
            << " (mode 0600), valid " << a.days << " days\n";
  if (o.role == TlsRole::kDevice) {
    std::cout << "on the device: shoal worker --tls-ca " << CaCertPath(a.dir)
              << " --tls-cert " << f.cert << " --tls-key " << f.key << " ...\n";
  } else {
    std::cout << "in the cluster file: tls: {ca: " << CaCertPath(a.dir)
              << ", cert: " << f.cert << ", key: " << f.key << "}\n";
  }
  return Status::Ok();
}

struct TokenArgs {
  std::string name, dir = "certs", ttl = "1h";
};

Status RunToken(const TokenArgs& a) {
  ASSIGN_OR_RETURN(int64_t ttl, ParseTokenTtl(a.ttl));
  ASSIGN_OR_RETURN(NewEnrollToken t,
                   CreateEnrollToken(a.dir, a.name, ttl, std::time(nullptr)));
  // The token alone on standard output, for `TOKEN=$(shoal certs token
  // ...)`; what to do with it beside, on standard error.
  std::cerr << "enrolment token for " << a.name << ", good for one "
            << "certificate until " << FormatTokenTime(t.expires)
            << " (its secret is kept hashed in " << EnrollTokensPath(a.dir)
            << "); on the board, with `shoal certs serve-enroll --dir " << a.dir
            << " --listen HOST:PORT` running here:\n"
            << "  shoal-worker enroll " << a.name
            << " --server HOST:PORT --token TOKEN\n";
  std::cout << t.text << std::endl;
  return Status::Ok();
}

struct ServeEnrollArgs {
  std::string dir = "certs", listen;
};

Status RunServeEnroll(const ServeEnrollArgs& a) {
  EnrollServiceOptions o;
  o.dir = a.dir;
  ASSIGN_OR_RETURN(auto service, EnrollService::Create(o));
  // Signals go to this thread, which waits for them below; the server's
  // threads never see one.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ASSIGN_OR_RETURN(auto server, StartEnrollServer(a.listen, service.get()));
  std::cout << "serving enrolment for the CA in " << a.dir << " (SHA-256 "
            << service->ca_sha256() << ") on https port " << server->port()
            << "; tokens from `shoal certs token NAME --dir " << a.dir
            << "`; Ctrl-C stops" << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  server.reset();
  std::cout << "enrolment server stopped" << std::endl;
  return Status::Ok();
}

}  // namespace

void AddCertsCommand(CLI::App* app) {
  CLI::App* cmd = app->add_subcommand(
      "certs", "Make a cluster CA and the certificates of its members");
  cmd->require_subcommand(1);

  auto dir = std::make_shared<std::string>();
  auto ca_days = std::make_shared<int>(3650);
  CLI::App* init = cmd->add_subcommand(
      "init", "Make the cluster CA: DIR/ca.key (mode 0600) and DIR/ca.crt");
  init->add_option("dir", *dir, "Directory for the CA (created, mode 0700)")
      ->required();
  init->add_option("--days", *ca_days, "Validity (default 3650)");
  init->callback([dir, ca_days] {
    auto f = InitCa(*dir, *ca_days);
    if (f.ok()) {
      std::cout << "made a cluster CA: certificate " << f->cert << ", key "
                << f->key << " (mode 0600; keep it off the devices)\n"
                << "next: shoal certs issue NAME --dir " << *dir
                << " [--role coordinator]\n";
    }
    throw CommandExit(ReportStatus(f.status()));
  });

  auto a = std::make_shared<IssueArgs>();
  CLI::App* issue = cmd->add_subcommand(
      "issue", "Issue NAME.key and NAME.crt, signed by the CA in --dir");
  issue
      ->add_option("name", a->name,
                   "Device or coordinator name (letters, digits, - _ .)")
      ->required();
  issue->add_option("--dir", a->dir, "The CA's directory (default certs)");
  issue
      ->add_option("--role", a->role,
                   "device (a worker: may take tensors from peers) or "
                   "coordinator (may deploy, probe, read statistics); "
                   "default device")
      ->check(CLI::IsMember({"device", "coordinator"}));
  issue->add_option("--san", a->sans,
                    "Also name this IP address or host name in the "
                    "certificate, for other tools (repeatable)");
  issue->add_option("--days", a->days, "Validity (default 3650)");
  issue->callback([a] { throw CommandExit(ReportStatus(RunIssue(*a))); });

  auto r = std::make_shared<IssueArgs>();
  CLI::App* revoke = cmd->add_subcommand(
      "revoke",
      "Turn NAME's certificate off: add it to the CA's revocation list, "
      "DIR/crl.pem");
  revoke->add_option("name", r->name, "The device or coordinator (NAME.crt)")
      ->required();
  revoke->add_option("--dir", r->dir, "The CA's directory (default certs)");
  revoke->callback([r] {
    auto done = RevokeCert(r->dir, r->name);
    if (done.ok()) {
      std::cout << "revoked " << r->name << "'s certificate (serial "
                << done->serial << "): " << done->crl << " lists "
                << done->entries
                << (done->entries == 1 ? " certificate" : " certificates")
                << "\n"
                << "copy it beside ca.crt on every device (workers take "
                   "--tls-crl "
                << done->crl
                << " and read it again when it changes); cluster files with "
                   "tls: {dir: "
                << r->dir << "} use it as it is\n";
    }
    throw CommandExit(ReportStatus(done.status()));
  });

  auto t = std::make_shared<TokenArgs>();
  CLI::App* token = cmd->add_subcommand(
      "token",
      "Make a one-time token with which the board NAME gets its certificate "
      "from `certs serve-enroll` (`certs enroll` on the board)");
  token->add_option("name", t->name, "The device the token is for")->required();
  token->add_option("--dir", t->dir, "The CA's directory (default certs)");
  token->add_option("--ttl", t->ttl,
                    "How long the token may be used: 30m, 1h, 2d (one minute "
                    "to seven days; default 1h)");
  token->callback([t] { throw CommandExit(ReportStatus(RunToken(*t))); });

  auto se = std::make_shared<ServeEnrollArgs>();
  CLI::App* serve = cmd->add_subcommand(
      "serve-enroll",
      "Serve enrolment over HTTPS: sign the certificate request a board "
      "sends with a token of `certs token`, once per token");
  serve->add_option("--dir", se->dir, "The CA's directory (default certs)");
  serve
      ->add_option("--listen", se->listen,
                   "HOST:PORT to listen on, e.g. 0.0.0.0:7380")
      ->required();
  serve->callback(
      [se] { throw CommandExit(ReportStatus(RunServeEnroll(*se))); });

  AddEnrollCommand(cmd);
}

}  // namespace shoal
