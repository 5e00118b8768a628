// `shoal cluster up|down FILE.yaml`: an emulated cluster on this machine, one
// worker process per device on 127.0.0.1, each held to its device's CPU
// share and memory with cgroup v1 controllers where they can be used, and to
// its link by the worker's own transport shaping.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cluster/cluster.h"
#include "runtime/wire.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

// Headroom of the memory cgroup over the device's budget: the process
// itself (binary, gRPC, oneDNN) before any weights.
constexpr int64_t kMemoryHeadroom = int64_t{256} << 20;

std::string StateDir(const std::string& file) {
  std::error_code ec;
  const std::string abs = fs::absolute(file, ec).string();
  return "/tmp/shoal-cluster-" + HashString(abs).substr(0, 12);
}

std::string CgroupName(const std::string& file, const std::string& dev) {
  return "shoal-" + HashString(fs::absolute(file).string()).substr(0, 8) + "-" +
         dev;
}

bool WriteFile(const std::string& path, const std::string& text,
               std::string* why) {
  std::ofstream f(path);
  f << text;
  f.flush();
  if (!f) {
    *why = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

// This process's own cgroup in a v1 hierarchy ("" for the root).
std::string OwnCgroup(const std::string& controller) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::stringstream ss(line.substr(a + 1, b - a - 1));
    std::string c;
    while (std::getline(ss, c, ',')) {
      if (c == controller) {
        std::string p = line.substr(b + 1);
        return p == "/" ? "" : p;
      }
    }
  }
  return "";
}

std::string CgroupDir(const std::string& controller, const std::string& name) {
  return "/sys/fs/cgroup/" + controller + OwnCgroup(controller) + "/" + name;
}

// Creates the device's cgroup for `controller` and sets its limits; returns
// the directory, or "" with `why` set.
std::string MakeCgroup(
    const std::string& controller, const std::string& name,
    const std::vector<std::pair<std::string, std::string>>& settings,
    std::string* why) {
  if (!fs::exists("/sys/fs/cgroup/" + controller + "/cgroup.procs")) {
    *why = "no cgroup v1 " + controller + " controller";
    return "";
  }
  const std::string dir = CgroupDir(controller, name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    *why = "cannot create " + dir + ": " + ec.message();
    return "";
  }
  for (const auto& [file, value] : settings) {
    if (!WriteFile(dir + "/" + file, value, why)) return "";
  }
  return dir;
}

bool Alive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

pid_t ReadPid(const std::string& path) {
  std::ifstream f(path);
  pid_t p = 0;
  f >> p;
  return p;
}

bool Healthy(const std::string& address) {
  auto stub = rpc::Worker::NewStub(MakeChannel(address, 1 << 20));
  rpc::HealthRequest req;
  req.set_protocol(kProtocolVersion);
  rpc::HealthReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(500));
  return stub->Health(&ctx, req, &rep).ok();
}

Status Up(const std::string& file) {
  ASSIGN_OR_RETURN(Cluster c, LoadCluster(file));
  const std::string state = StateDir(file);
  fs::create_directories(state);
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::cout << "cluster " << file << ": " << c.devices.size()
            << " workers (logs and pids in " << state << ")\n";
  for (const auto& d : c.devices) {
    const auto colon = d.address.rfind(':');
    const std::string host = d.address.substr(0, colon);
    if (colon == std::string::npos ||
        (host != "127.0.0.1" && host != "localhost")) {
      return InvalidArgument("device " + d.name + " has address '" + d.address +
                             "': cluster up starts workers on this machine "
                             "only (127.0.0.1:PORT)");
    }
    const std::string pidfile = state + "/" + d.name + ".pid";
    if (Alive(ReadPid(pidfile))) {
      std::cout << "  " << d.name << ": already running (pid "
                << ReadPid(pidfile) << ")\n";
      continue;
    }
    std::string cpu_note = "not limited", mem_note = "not limited";
    std::vector<std::string> dirs;
    const std::string cg = CgroupName(file, d.name);
    if (d.cpu > 0) {
      // Quota of at least 1 ms (the kernel's minimum) per period.
      const int64_t period = std::max<int64_t>(
          20000, static_cast<int64_t>(std::ceil(1000 / d.cpu)));
      const int64_t quota = static_cast<int64_t>(std::llround(d.cpu * period));
      std::string why;
      std::string dir =
          MakeCgroup("cpu", cg,
                     {{"cpu.cfs_period_us", std::to_string(period)},
                      {"cpu.cfs_quota_us", std::to_string(quota)}},
                     &why);
      if (!dir.empty()) {
        dirs.push_back(dir);
        cpu_note = "cgroup cpu quota " + std::to_string(quota) + "/" +
                   std::to_string(period) + " us";
      } else {
        cpu_note = "NOT limited (" + why + ")";
      }
    }
    if (d.memory_bytes > 0) {
      std::string why;
      std::string dir =
          MakeCgroup("memory", cg,
                     {{"memory.limit_in_bytes",
                       std::to_string(d.memory_bytes + kMemoryHeadroom)}},
                     &why);
      if (!dir.empty()) {
        dirs.push_back(dir);
        mem_note = "cgroup memory limit " +
                   std::to_string((d.memory_bytes + kMemoryHeadroom) >> 20) +
                   " MiB";
      } else {
        mem_note = "NOT limited by the kernel (" + why +
                   "); the worker's own budget still refuses deployments";
      }
    }
    const int threads =
        d.cpu > 0
            ? std::max(1, std::min(d.cores, static_cast<int>(std::ceil(d.cpu))))
            : d.cores;
    std::vector<std::string> args = {
        self,        "worker",
        "--listen",  d.address,
        "--name",    d.name,
        "--memory",  std::to_string(d.memory_bytes),
        "--threads", std::to_string(threads)};
    if (d.link.bandwidth_bps > 0) {
      args.push_back("--link-bandwidth");
      args.push_back(std::to_string(d.link.bandwidth_bps) + "bit");
    }
    if (d.link.latency_s > 0) {
      args.push_back("--link-latency");
      args.push_back(std::to_string(d.link.latency_s) + "s");
    }
    const std::string log = state + "/" + d.name + ".log";
    pid_t pid = fork();
    if (pid < 0) return Internal("fork failed");
    if (pid == 0) {
      setsid();
      for (const auto& dir : dirs) {
        std::ofstream(dir + "/cgroup.procs") << getpid();
      }
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
      int nul = open("/dev/null", O_RDONLY);
      if (nul >= 0) dup2(nul, 0);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(self.c_str(), argv.data());
      _exit(127);
    }
    std::ofstream(pidfile) << pid;
    std::ofstream(state + "/" + d.name + ".cgroups") << [&] {
      std::string s;
      for (const auto& x : dirs) s += x + "\n";
      return s;
    }();
    bool up = false;
    for (int i = 0; i < 100 && !up; ++i) {
      int st = 0;
      if (waitpid(pid, &st, WNOHANG) == pid) break;
      up = Healthy(d.address);
      if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!up) {
      return Unavailable("worker " + d.name + " did not come up on " +
                         d.address + "; see " + log);
    }
    std::cout << "  " << d.name << " on " << d.address << " (pid " << pid
              << ", " << threads << " threads): cpu " << cpu_note << "; memory "
              << mem_note << "; link "
              << (d.link.bandwidth_bps > 0
                      ? std::to_string(d.link.bandwidth_bps / 1e6) + " Mbit/s"
                      : std::string("unshaped"))
              << (d.link.latency_s > 0
                      ? " + " + std::to_string(d.link.latency_s * 1e3) +
                            " ms (shaped by the worker's transport)"
                      : std::string())
              << "\n";
  }
  return Status::Ok();
}

Status Down(const std::string& file) {
  ASSIGN_OR_RETURN(Cluster c, LoadCluster(file));
  const std::string state = StateDir(file);
  int stopped = 0;
  for (const auto& d : c.devices) {
    const std::string pidfile = state + "/" + d.name + ".pid";
    const pid_t pid = ReadPid(pidfile);
    if (Alive(pid)) {
      kill(pid, SIGTERM);
      for (int i = 0; i < 50 && Alive(pid); ++i) {
        waitpid(pid, nullptr, WNOHANG);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (Alive(pid)) kill(pid, SIGKILL);
      ++stopped;
      std::cout << "stopped " << d.name << " (pid " << pid << ")\n";
    }
    std::remove(pidfile.c_str());
    std::ifstream cgs(state + "/" + d.name + ".cgroups");
    std::string dir;
    while (std::getline(cgs, dir)) {
      for (int i = 0; i < 20 && rmdir(dir.c_str()) != 0 && errno == EBUSY;
           ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    std::remove((state + "/" + d.name + ".cgroups").c_str());
  }
  std::cout << "cluster " << file << ": " << stopped << " workers stopped\n";
  return Status::Ok();
}

}  // namespace

void AddClusterCommand(CLI::App* app) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = app->add_subcommand(
      "cluster", "Start or stop an emulated cluster on this machine");
  cmd->require_subcommand(1);
  CLI::App* up = cmd->add_subcommand(
      "up", "Start one limited worker process per device (127.0.0.1)");
  up->add_option("file", *file, "Cluster file (YAML)")->required();
  up->callback([file] { throw CommandExit(ReportStatus(Up(*file))); });
  CLI::App* down =
      cmd->add_subcommand("down", "Stop the workers of a cluster file");
  down->add_option("file", *file, "Cluster file (YAML)")->required();
  down->callback([file] { throw CommandExit(ReportStatus(Down(*file))); });
}

}  // namespace shoal
