#include "emulate/device_limits.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "cluster/cpu_quota.h"
#include "cluster/swap.h"
#include "runtime/wire.h"
#include "util/units.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

// Headroom of the memory cgroup over the device's budget: the process
// itself (binary, gRPC, oneDNN) before any weights.
constexpr int64_t kMemoryHeadroom = int64_t{256} << 20;

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
}  // namespace

// The device's cgroups for its cpu quota and memory limit, where the
// kernel offers them; fills the report's notes. Returns their directories.
std::vector<std::string> LimitDevice(const std::string& file,
                                     const DeviceSpec& d, DeviceUpReport* rep) {
  rep->cpu_note = d.OnBoardRates() ? "a " + d.board->name +
                                         ": each task takes its class's time"
                                   : "not limited";
  rep->memory_note = "not limited";
  // A named board's pace is its class's time, not a share of the host.
  rep->cpu_limited = d.OnBoardRates();
  std::vector<std::string> dirs;
  const std::string cg = CgroupName(file, d.name);
  if (d.cpu > 0) {
    // The simulator models the same period and quota (cluster/cpu_quota.h).
    const int64_t period = QuotaPeriodUs(d.QuotaCpu());
    const int64_t quota = QuotaUs(d.QuotaCpu());
    std::string why;
    std::string dir = MakeCgroup("cpu", cg,
                                 {{"cpu.cfs_period_us", std::to_string(period)},
                                  {"cpu.cfs_quota_us", std::to_string(quota)}},
                                 &why);
    if (!dir.empty()) {
      dirs.push_back(dir);
      rep->cpu_limited = true;
      rep->cpu_note = "cgroup cpu quota " +
                      Percent(static_cast<double>(quota) / period) +
                      " of a core (" + std::to_string(quota) + " of every " +
                      std::to_string(period) + " us)";
    } else {
      rep->cpu_note = "NOT limited by the kernel (" + why + ")";
    }
    rep->cpu_note +=
        ", compute paced by the worker to " + Percent(d.cpu) + " of a core";
  }
  if (d.memory_bytes > 0 && FrameworkMemoryOf(d.board) != nullptr) {
    // A board that swaps holds more than its memory and pays for it in
    // time (cluster/swap.h, the worker's --swap-as), not by being killed.
    rep->memory_note = "modelled: what does not fit " +
                       std::to_string(d.memory_bytes >> 20) +
                       " MiB is paged (--swap-as)";
  } else if (d.memory_bytes > 0) {
    std::string why;
    std::string dir =
        MakeCgroup("memory", cg,
                   {{"memory.limit_in_bytes",
                     std::to_string(d.memory_bytes + kMemoryHeadroom)}},
                   &why);
    if (!dir.empty()) {
      dirs.push_back(dir);
      rep->memory_limited = true;
      rep->memory_note =
          "cgroup memory limit " +
          std::to_string((d.memory_bytes + kMemoryHeadroom) >> 20) + " MiB";
    } else {
      rep->memory_note = "NOT limited by the kernel (" + why +
                         "); the worker's own budget still refuses deployments";
    }
  }
  return dirs;
}

void RemoveDeviceCgroups(const std::string& list) {
  std::ifstream cgs(list);
  std::string dir;
  while (std::getline(cgs, dir)) {
    for (int i = 0; i < 20 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::remove(list.c_str());
}

}  // namespace shoal
