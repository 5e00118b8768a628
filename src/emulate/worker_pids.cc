#include "emulate/worker_pids.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace shoal {

bool Alive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

std::vector<std::string> CommandLine(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline",
                  std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(f, a, '\0');) args.push_back(a);
  return args;
}

bool OurWorker(pid_t pid, const std::string& name) {
  if (!Alive(pid)) return false;
  const auto args = CommandLine(pid);
  bool worker = false;
  for (size_t i = 0; i < args.size(); ++i) {
    worker |= args[i] == "worker";
    if (worker && args[i] == "--name" && i + 1 < args.size() &&
        args[i + 1] == name) {
      return true;
    }
  }
  return false;
}

std::string Quoted(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return "'" + s + "'";
}

pid_t ReadPid(const std::string& path) {
  std::ifstream f(path);
  pid_t p = 0;
  f >> p;
  return p;
}

void StopProcess(pid_t pid) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 50 && Alive(pid); ++i) {
    waitpid(pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (Alive(pid)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

}  // namespace shoal
