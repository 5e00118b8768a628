// `serve --discover`: the workers that announce themselves on the local
// network (DNS-SD, _shoal._tcp, as `shoal cluster scan` finds them) become
// members beside the cluster file's devices, and stop being members when
// they no longer announce. A browse listens for seconds, so a thread of its
// own scans; the monitor applies what it found at its next tick, as it
// applies a re-read cluster file, and plans again when a board appears or
// goes.
#include <algorithm>
#include <mutex>

#include "discovery/scan.h"
#include "serve/membership.h"
#include "serve/server_impl.h"

namespace shoal {

StatusOr<std::vector<DeviceSpec>> Server::Impl::ScanForWorkers() {
  ScanOptions o;
  // A browse shorter than the interval, so scans do not run back to back.
  o.browse_s = std::clamp(opts.discover_s / 2, 0.5, 3.0);
  o.answer_s = 2;
  o.tls = tls;
  ASSIGN_OR_RETURN(const std::vector<ScannedWorker> workers, ScanWorkers(o));
  return ClusterOfScan(workers).devices;
}

namespace {

// The devices' names and addresses, which is what makes a member.
std::vector<std::string> Keys(const std::vector<DeviceSpec>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.name + "@" + d.address);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void Server::Impl::DiscoverLoop() {
  const auto interval =
      std::chrono::milliseconds(int64_t(opts.discover_s * 1e3));
  std::string last_error;
  while (true) {
    auto devices = ScanForWorkers();
    if (!devices.ok()) {
      // Said once until it changes: avahi-daemon stopped is one problem,
      // not one a second.
      if (devices.status().message() != last_error) {
        last_error = devices.status().message();
        ServeLog(LogLevel::kWarn,
                 "DNS-SD: %s; keeping the workers found before",
                 last_error.c_str());
      }
    } else {
      last_error.clear();
      std::lock_guard<std::mutex> lock(found_mu);
      if (Keys(*devices) != Keys(found)) {
        found = std::move(devices).value();
        found_fresh = true;
      }
    }
    std::unique_lock<std::mutex> lock(stop_mu);
    if (stop_cv.wait_for(lock, interval, [&] { return monitor_stop; })) {
      return;
    }
  }
}

std::vector<DeviceSpec> Server::Impl::FoundWorkers(bool* fresh) {
  std::lock_guard<std::mutex> lock(found_mu);
  *fresh = found_fresh;
  found_fresh = false;
  return found;
}

}  // namespace shoal
