#include "cli/commands.h"

#include <iostream>
#include <new>

namespace shoal {

int ReportStatus(const Status& s) {
  if (s.ok()) return 0;
  std::cerr << "shoal: error: " << s.message() << std::endl;
  return ExitCodeFor(s);
}

namespace {

// "shoal plan", "shoal cluster up": the command that was running.
std::string CommandName(const CLI::App& app) {
  // Not app.get_name(): CLI11 sets it to argv[0], a path.
  std::string name = "shoal";
  const CLI::App* at = &app;
  while (true) {
    auto subs = at->get_subcommands();
    if (subs.empty()) break;
    at = subs.front();
    name += " " + at->get_name();
  }
  return name;
}

}  // namespace

int RunCommandLine(CLI::App* app, const std::function<void()>& parse) {
  // An exception escaping a command is a bug or an input no check foresaw;
  // either way the user gets what failed and exit 1, not `terminate
  // called` and a core dump (exit 134).
  try {
    parse();
    return 0;
  } catch (const CLI::ParseError& e) {
    return app->exit(e);  // CommandExit too: the command's own exit code
  } catch (const std::bad_alloc&) {
    std::cerr << "shoal: error: " << CommandName(*app)
              << " ran out of memory (an input larger than this machine "
                 "holds?)"
              << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "shoal: error: " << CommandName(*app)
              << " failed on an unexpected condition: " << e.what()
              << std::endl;
  } catch (...) {
    std::cerr << "shoal: error: " << CommandName(*app)
              << " failed on an unexpected, unnamed exception" << std::endl;
  }
  return 1;
}

void AddAdvertiseOption(CLI::App* cmd, std::string* advertise) {
  cmd->add_option(
      "--advertise", *advertise,
      "HOST[:PORT] the workers send results to: listen there (port 0 or "
      "none: any free port) and tell them (default: this machine's address "
      "on its route to the first device)");
}

void AddTlsOptions(CLI::App* cmd, TlsPaths* paths, const std::string& whose) {
  cmd->add_option("--tls-ca", paths->ca,
                  "The cluster CA's certificate (PEM): mutual TLS with peers "
                  "holding certificates it signed (docs/security.md)");
  cmd->add_option(
      "--tls-cert", paths->cert,
      "This " + whose + "'s certificate (PEM, from shoal certs issue)");
  cmd->add_option("--tls-key", paths->key,
                  "This " + whose + "'s private key (PEM, mode 0600)");
}

StatusOr<std::shared_ptr<const TlsIdentity>> LoadTlsFlags(
    const TlsPaths& paths) {
  if (!paths.any()) return std::shared_ptr<const TlsIdentity>();
  auto id = LoadTlsIdentity(paths);
  if (!id.ok()) return id.status().WithContext("--tls-ca/--tls-cert/--tls-key");
  return id;
}

StatusOr<std::optional<Shape>> ParseInputShapeFlag(const std::string& text) {
  if (text.empty()) return std::optional<Shape>();
  Shape s;
  if (!ParseShape(text, &s)) {
    return InvalidArgument(
        "--input-shape '" + text +
        "' is not a list of positive integers like 1,3,224,224");
  }
  return std::optional<Shape>(s);
}

}  // namespace shoal
