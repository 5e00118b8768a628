// Test helpers for tests that run the shoal binary as child processes
// (workers, `shoal serve`), each writing to a log file the test reads.
#ifndef SHOAL_RUNTIME_PROCESS_TEST_UTIL_H_
#define SHOAL_RUNTIME_PROCESS_TEST_UTIL_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace shoal::testing {

// The binary this build made (SHOAL_BINARY, set by CMake for the test
// binaries); the environment variable of the same name overrides it.
inline std::string ShoalBinary() {
  const char* env = std::getenv("SHOAL_BINARY");
  return env != nullptr ? env : SHOAL_BINARY;
}

// The whole file; empty if it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Runs a shell command; its exit code, and its stdout and stderr in `out`
// (replaced).
inline int Shell(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Starts args[0] with `args` as a child whose stdout and stderr go to `log`
// (truncated). Returns its pid, or -1 if fork failed. The child is killed
// when the calling thread ends, so a crashed test leaves no process behind.
inline pid_t SpawnLogged(std::vector<std::string> args,
                         const std::string& log) {
  // Built before fork: the child of a threaded process may not allocate.
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);  // the parent died before prctl
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace shoal::testing

#endif  // SHOAL_RUNTIME_PROCESS_TEST_UTIL_H_
