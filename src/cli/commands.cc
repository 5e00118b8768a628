#include "cli/commands.h"

#include <algorithm>
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

// Levenshtein distance: how many single-character edits turn a into b.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The candidate closest to `word`, if close enough to be a typo.
std::string Closest(const std::string& word,
                    const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

// The deepest subcommand the command line reached.
const CLI::App* Deepest(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return at;
}

// "did you mean" for a misspelt flag, subcommand or listed value: the
// arguments left over, or the value a validator refused.
std::string Suggestion(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* at = Deepest(app);
  const std::string msg = e.what();
  // A value outside a list: "--objective: fast not in {latency,throughput}".
  const size_t in = msg.find(" not in {");
  if (in != std::string::npos) {
    const size_t start = msg.rfind(' ', in - 1);
    const std::string value =
        msg.substr(start == std::string::npos ? 0 : start + 1,
                   in - (start == std::string::npos ? 0 : start + 1));
    const size_t close = msg.find('}', in);
    std::vector<std::string> list;
    std::string item;
    for (size_t i = in + 9; i < close && i < msg.size(); ++i) {
      if (msg[i] == ',') {
        list.push_back(item);
        item.clear();
      } else {
        item += msg[i];
      }
    }
    list.push_back(item);
    const std::string c = Closest(value, list);
    return c.empty() ? "" : "did you mean '" + c + "'?";
  }
  std::vector<std::string> flags, commands;
  for (const CLI::Option* o : at->get_options()) {
    for (const auto& n : o->get_lnames()) flags.push_back("--" + n);
  }
  for (const CLI::App* s : const_cast<CLI::App*>(at)->get_subcommands({})) {
    commands.push_back(s->get_name());
  }
  // Flags renamed so that one name has one meaning everywhere.
  static const std::pair<const char*, const char*> kRenamed[] = {
      {"--random-seed", "--input-seed"},
      {"--random-seed", "--assignment-seed"},
      {"--seed", "--weights-seed"}};
  for (const std::string& arg : at->remaining()) {
    const bool flag = arg.rfind("--", 0) == 0;
    const std::string word = flag ? arg.substr(0, arg.find('=')) : arg;
    for (const auto& [old_name, new_name] : kRenamed) {
      if (word == old_name &&
          std::find(flags.begin(), flags.end(), new_name) != flags.end()) {
        return "did you mean '" + std::string(new_name) + "'? ('" + word +
               "' was renamed)";
      }
    }
    const std::string c = Closest(word, flag ? flags : commands);
    if (!c.empty()) return "did you mean '" + c + "' for '" + word + "'?";
  }
  return "";
}

}  // namespace

int RunCommandLine(CLI::App* app, const std::function<void()>& parse) {
  // An exception escaping a command is a bug or an input no check foresaw;
  // either way the user gets what failed and exit 1, not `terminate
  // called` and a core dump (exit 134).
  try {
    parse();
    return 0;
  } catch (const CommandExit& e) {
    return e.get_exit_code();  // the command's own exit code
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    // A usage error: CLI11's message, a suggestion where one is close,
    // and one exit code for all of them.
    app->exit(e);
    const std::string hint = Suggestion(*app, e);
    if (!hint.empty()) std::cerr << "shoal: " << hint << std::endl;
    return kUsageExitCode;
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
  cmd->add_option("--tls-crl", paths->crl,
                  "The CA's revocation list (PEM, from shoal certs revoke): "
                  "certificates on it are refused; read again when the file "
                  "changes");
}

StatusOr<std::shared_ptr<const TlsIdentity>> LoadTlsFlags(
    const TlsPaths& paths) {
  if (!paths.any()) return std::shared_ptr<const TlsIdentity>();
  auto id = LoadTlsIdentity(paths);
  if (!id.ok()) {
    return id.status().WithContext("--tls-ca/--tls-cert/--tls-key/--tls-crl");
  }
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
