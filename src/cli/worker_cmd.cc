// `shoal worker --listen HOST:PORT`: the daemon one device runs. It serves
// until SIGINT or SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <thread>

#include "cli/commands.h"
#include "cli/worker_config.h"
#include "cluster/cluster_writer.h"
#include "cluster/swap.h"
#include "discovery/dns_sd.h"
#include "discovery/worker_txt.h"
#include "runtime/peer_auth.h"
#include "runtime/wire.h"
#include "runtime/worker.h"
#include "security/device_name.h"
#include "util/net_address.h"
#include "util/units.h"
#include "util/version.h"

namespace shoal {
namespace {

struct WorkerArgs {
  std::string listen = "127.0.0.1:7000", name, memory = "0", bandwidth, latency,
              max_message = "256MiB", backend = BackendName(kDefaultBackend),
              cache_dir, cache_size = "4GiB", metrics, config, medium,
              medium_bandwidth, board, swap_as;
  int threads = 0;                             // 0: the machine's cores
  bool announce = false, no_announce = false;  // neither: unless loopback
  double cpu_fraction = 0;
  double board_speed = 1, dilation = 1;
  TlsPaths tls;
};

// The user's cache (XDG), or the system's for a service without a home.
std::string DefaultCacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x) {
    return std::string(x) + "/shoal/weights";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h) {
    return std::string(h) + "/.cache/shoal/weights";
  }
  return "/var/cache/shoal/weights";
}

// This machine's host name as a device name ("pi-kitchen"), or "" when
// it is not one.
std::string HostDeviceName() {
  char buf[256] = "";
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  std::string h = buf;
  h = h.substr(0, h.find('.'));
  return CheckDeviceName(h).ok() ? h : "";
}

// Announces the worker with DNS-SD (discovery/dns_sd.h) so that `shoal
// cluster scan` finds it; null when it does not announce.
std::unique_ptr<DnsSdAnnouncement> Announce(const WorkerOptions& o, int port) {
  WorkerAdvert ad;
  ad.name = o.name;
  ad.cores = o.threads;
  ad.memory_bytes = o.memory_bytes;
  ad.version = kShoalVersion;
  ad.protocol = kProtocolVersion;
  ad.tls = o.tls != nullptr;
  DnsSdService s;
  s.instance = o.name;
  s.type = kShoalServiceType;
  s.port = port;
  s.txt = EncodeWorkerTxt(ad);
  if (auto hp = SplitHostPort(o.listen, "--listen"); hp.ok()) {
    s.listen_host = hp->host;
  }
  return StartAnnouncing(s, [](const std::string& line) {
    std::cerr << "shoal worker: " << line << std::endl;
  });
}

// The emulated link (--bandwidth, --latency) and shared medium (--medium,
// --medium-bandwidth).
Status ParseLinkFlags(const WorkerArgs& a, WorkerOptions* o) {
  if (!a.bandwidth.empty()) {
    ASSIGN_OR_RETURN(o->link.bandwidth_bps, ParseBitRate(a.bandwidth));
  }
  if (!a.latency.empty()) {
    ASSIGN_OR_RETURN(o->link.latency_s, ParseDuration(a.latency));
  }
  if (a.medium.empty() != a.medium_bandwidth.empty()) {
    return InvalidArgument(
        "--medium and --medium-bandwidth go together (the channel's file and "
        "its rate)");
  }
  if (!a.medium.empty()) {
    Medium m{.shared = true};
    auto bw = ParseBitRate(a.medium_bandwidth);
    if (!bw.ok()) return bw.status().WithContext("--medium-bandwidth");
    m.bandwidth_bps = bw.value();
    m.bandwidth_bps /= a.dilation;
    ASSIGN_OR_RETURN(o->medium, SharedMedium::Open(a.medium, m));
  }
  // Dilated time: the link takes K times as long as the board's (its
  // compute is stretched in the task loop).
  if (o->link.bandwidth_bps > 0) o->link.bandwidth_bps /= a.dilation;
  o->link.latency_s *= a.dilation;
  return Status::Ok();
}

// The emulated board (--board, --board-speed) and time dilation.
Status ParseBoardFlags(const WorkerArgs& a, WorkerOptions* o) {
  if (!(a.dilation >= 1 && a.dilation <= 1000)) {
    return InvalidArgument("--dilation must be between 1 and 1000");
  }
  if (!(a.board_speed >= 1.0 / 64 && a.board_speed <= 64)) {
    return InvalidArgument("--board-speed must be between 1/64 and 64");
  }
  o->dilation = a.dilation;
  o->board_speed = a.board_speed;
  if (!a.swap_as.empty()) {
    o->swap = FrameworkMemoryOf(FindBoard(a.swap_as));
    if (o->swap == nullptr) {
      return InvalidArgument("--swap-as '" + a.swap_as +
                             "' is not a board class that swaps (pi3-collab)");
    }
    if (o->memory_bytes <= 0) {
      return InvalidArgument(
          "--swap-as needs --memory: what does not fit it is paged");
    }
  }
  if (a.board.empty()) return Status::Ok();
  o->board = FindBoard(a.board);
  if (o->board == nullptr) {
    return InvalidArgument("--board '" + a.board + "' is not a known class (" +
                           BoardNames() + ")");
  }
  if (o->board->lcp_paper) {
    return InvalidArgument("--board " + a.board +
                           " is emulated by --cpu-fraction (a calibrated "
                           "share of a host core), not by its rates");
  }
  if (o->cpu_fraction > 0) {
    return InvalidArgument(
        "--board and --cpu-fraction both pace tasks: give one");
  }
  return Status::Ok();
}

// The worker's options from its flags, checked.
Status WorkerOptionsOf(const WorkerArgs& a, bool announce, WorkerOptions* o) {
  o->listen = a.listen;
  // A board found by a scan is best known by its host name.
  const std::string host_name = announce ? HostDeviceName() : "";
  o->name = !a.name.empty()      ? a.name
            : !host_name.empty() ? host_name
                                 : a.listen;
  if (announce) {
    RETURN_IF_ERROR(CheckDeviceName(o->name).WithContext(
        "--name, which an announcing worker gives as its device name"));
  }
  ASSIGN_OR_RETURN(o->memory_bytes, ParseBytes(a.memory));
  if (a.threads < 0) return InvalidArgument("--threads must be >= 0");
  o->threads = a.threads > 0
                   ? a.threads
                   : std::max(1u, std::thread::hardware_concurrency());
  if (a.cpu_fraction < 0 || a.cpu_fraction > 1024) {
    return InvalidArgument("--cpu-fraction must be between 0 and 1024");
  }
  o->cpu_fraction = a.cpu_fraction;
  RETURN_IF_ERROR(ParseBoardFlags(a, o));
  RETURN_IF_ERROR(ParseLinkFlags(a, o));
  ASSIGN_OR_RETURN(o->max_message_bytes, ParseBytes(a.max_message));
  if (o->max_message_bytes < 4096 ||
      o->max_message_bytes > (int64_t{1} << 30)) {
    return InvalidArgument("--max-message must be between 4KiB and 1GiB");
  }
  ASSIGN_OR_RETURN(o->backend, ParseBackend(a.backend));
  o->cache_dir = a.cache_dir.empty() ? DefaultCacheDir() : a.cache_dir;
  ASSIGN_OR_RETURN(o->cache_max_bytes, ParseBytes(a.cache_size));
  ASSIGN_OR_RETURN(o->tls, LoadTlsFlags(a.tls));
  o->metrics_listen = a.metrics;
  if (o->tls && o->tls->role != TlsRole::kDevice) {
    return InvalidArgument("--tls-cert " + a.tls.cert + " has the " +
                           RoleName(o->tls->role) +
                           " role; a worker shows a device certificate "
                           "(shoal certs issue NAME --role device)");
  }
  return Status::Ok();
}

void WarnIfPlaintext(const WorkerOptions& o) {
  if (!o.tls && !IsLoopbackListen(o.listen)) {
    // Plaintext beyond this machine: whoever reaches the port can deploy,
    // read and redirect (docs/security.md).
    std::cerr << "shoal worker: warning: listening on " << o.listen
              << " without TLS: any host that reaches this port can deploy "
                 "plans and weights to it, read its results and make it send "
                 "data elsewhere; give --tls-ca, --tls-cert and "
                 "--tls-key (docs/security.md)"
              << std::endl;
  }
  if (!o.tls && !o.metrics_listen.empty() &&
      !IsLoopbackListen(o.metrics_listen)) {
    std::cerr << "shoal worker: warning: --metrics " << o.metrics_listen
              << " is plain HTTP without authentication: any host that "
                 "reaches it reads the worker's plan and peers; with TLS it "
                 "is HTTPS for coordinator certificates only "
                 "(docs/security.md)"
              << std::endl;
  }
}

// The started worker's port and settings, and its metrics port if any.
void PrintStarted(const WorkerOptions& o, const Worker& w) {
  std::cout << "worker " << o.name << " listening on port " << w.port()
            << " (memory budget "
            << (o.memory_bytes > 0 ? HumanBytes(o.memory_bytes)
                                   : std::string("unlimited"))
            << ", weights cached in " << o.cache_dir << ", " << o.threads
            << (o.threads == 1 ? " kernel thread, " : " kernel threads, ")
            << (o.cpu_fraction > 0
                    ? "compute paced to " + Percent(o.cpu_fraction) +
                          " of a host core, "
                    : std::string())
            << (o.board != nullptr
                    ? "emulating a " + o.board->name +
                          (o.board_speed != 1
                               ? " x " + std::to_string(o.board_speed)
                               : std::string()) +
                          ", "
                    : std::string())
            << (o.swap != nullptr ? std::string("paging what does not fit, ")
                                  : std::string())
            << (o.dilation != 1
                    ? "time dilated x " + std::to_string(o.dilation) + ", "
                    : std::string())
            << (o.tls ? "mutual TLS as " + o.tls->name + ", "
                      : std::string("plaintext, "))
            << "link "
            << (o.link.bandwidth_bps > 0 ? HumanBitRate(o.link.bandwidth_bps)
                                         : std::string("unshaped"))
            << (o.link.latency_s > 0 ? " + " + HumanMs(o.link.latency_s * 1e3)
                                     : std::string())
            << (o.medium ? ", on a shared medium of " +
                               HumanBitRate(o.medium->medium().bandwidth_bps)
                         : std::string())
            << ")" << std::endl;
  if (w.metrics_port() > 0) {
    std::cout << "worker " << o.name << " metrics on port " << w.metrics_port()
              << (o.tls ? " (HTTPS, GET /metrics, coordinator certificates)"
                        : " (GET /metrics)")
              << std::endl;
  }
}

Status RunWorker(const WorkerArgs& a) {
  // Announced on a network by default, where nobody else reaches a
  // loopback address anyway (and emulated clusters must not flood a LAN).
  const bool announce =
      a.announce || (!a.no_announce && !IsLoopbackListen(a.listen));
  WorkerOptions o;
  RETURN_IF_ERROR(WorkerOptionsOf(a, announce, &o));
  WarnIfPlaintext(o);
  // Signals go to one waiting thread, which shuts the server down cleanly.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ASSIGN_OR_RETURN(auto w, Worker::Start(o));
  std::unique_ptr<DnsSdAnnouncement> announcement;
  if (announce) announcement = Announce(o, w->port());
  PrintStarted(o, *w);
  Worker* wp = w.get();
  std::thread waiter([wp, set] {
    int sig = 0;
    sigwait(&set, &sig);
    wp->Shutdown();
  });
  w->Wait();
  announcement.reset();  // withdrawn: scans stop listing it
  // Wait() also returns if the server stops for another reason.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  std::cout << "worker " << o.name << " stopped" << std::endl;
  return Status::Ok();
}

// The settings of --config FILE that no flag on the command line gave.
Status ApplyConfig(const CLI::App& cmd, WorkerArgs* a) {
  ASSIGN_OR_RETURN(WorkerSettings file, LoadWorkerConfig(a->config));
  const std::map<std::string, std::string*> text = {
      {"--listen", &a->listen},           {"--name", &a->name},
      {"--memory", &a->memory},           {"--backend", &a->backend},
      {"--cache-dir", &a->cache_dir},     {"--cache-size", &a->cache_size},
      {"--max-message", &a->max_message}, {"--tls-ca", &a->tls.ca},
      {"--tls-cert", &a->tls.cert},       {"--tls-key", &a->tls.key},
      {"--metrics", &a->metrics}};
  for (const auto& [flag, value] : file) {
    if (cmd.count(flag) > 0) continue;  // the command line wins
    if (flag == "--threads") {
      a->threads = std::stoi(value);  // checked: a few digits
    } else if (flag == "--announce") {
      // `announce: false` is --no-announce; either flag given wins.
      if (cmd.count("--announce") == 0 && cmd.count("--no-announce") == 0) {
        a->announce = value == "true";
        a->no_announce = value == "false";
      }
    } else if (auto it = text.find(flag); it != text.end()) {
      *it->second = value;
    }
  }
  return Status::Ok();
}

}  // namespace

void AddWorkerCommand(CLI::App* app) {
  auto a = std::make_shared<WorkerArgs>();
  CLI::App* cmd =
      app->add_subcommand("worker", "Run a worker daemon (one device)");
  cmd->add_option("--listen", a->listen,
                  "HOST:PORT to serve on (default 127.0.0.1:7000)");
  cmd->add_option("--name", a->name,
                  "Device name (default: the host name when announcing, else "
                  "the address)");
  CLI::Option* announce = cmd->add_flag(
      "--announce", a->announce,
      "Announce it on the local network with DNS-SD (_shoal._tcp, through "
      "avahi-daemon) for shoal cluster scan (the default unless --listen is "
      "a loopback address)");
  cmd->add_flag("--no-announce", a->no_announce,
                "Do not announce it, whatever --listen is")
      ->excludes(announce);
  cmd->add_option("--memory", a->memory,
                  "Memory budget for a deployment, e.g. 1GiB (default 0: "
                  "unlimited)");
  cmd->add_option("--threads", a->threads,
                  "Kernel threads (default 0: one per core of the machine)");
  cmd->add_option("--cpu-fraction", a->cpu_fraction,
                  "Emulated CPU speed in host cores: a task using c s of CPU "
                  "takes c / F s (default 0: off)");
  cmd->add_option("--board", a->board,
                  "Emulate a board class (shoal boards): each task takes the "
                  "class's time for it (default: none)");
  cmd->add_option("--board-speed", a->board_speed,
                  "With --board: the board's speed as a multiple of its "
                  "class (default 1)");
  cmd->add_option("--swap-as", a->swap_as,
                  "Page what does not fit --memory as this board class's "
                  "framework would (pi3-collab: the collaborative-execution "
                  "paper's Pi 3), adding its swap time to each request "
                  "(default: none)");
  cmd->add_option("--dilation", a->dilation,
                  "Stretch every emulated time (board compute, link, medium) "
                  "by this factor, for a host that cannot run its boards in "
                  "real time (default 1)");
  cmd->add_option("--link-bandwidth", a->bandwidth,
                  "Emulated bandwidth of what it sends, e.g. 62Mbit");
  cmd->add_option("--link-latency", a->latency,
                  "Emulated one-way latency of what it sends, e.g. 9ms");
  cmd->add_option("--medium", a->medium,
                  "Emulated shared radio channel: a file every emulated "
                  "device's worker on this host maps (cluster up passes it)");
  cmd->add_option("--medium-bandwidth", a->medium_bandwidth,
                  "The shared channel's rate, e.g. 62Mbit: a message to "
                  "another device holds it twice its time at this rate");
  cmd->add_option("--max-message", a->max_message,
                  "Largest gRPC message accepted (default 256MiB)");
  cmd->add_option("--backend", a->backend,
                  "onednn, xnnpack or reference (default: xnnpack on arm64, "
                  "onednn elsewhere)");
  cmd->add_option("--cache-dir", a->cache_dir,
                  "Where weights are kept between deployments, by content "
                  "hash (default $XDG_CACHE_HOME/shoal/weights or "
                  "~/.cache/shoal/weights)");
  AddTlsOptions(cmd, &a->tls, "device");
  cmd->add_option("--cache-size", a->cache_size,
                  "Weights no deployment uses are removed beyond this size "
                  "(default 4GiB)");
  cmd->add_option("--metrics", a->metrics,
                  "HOST:PORT to serve Prometheus metrics on (GET /metrics; "
                  "default: none)");
  cmd->add_option("--config", a->config,
                  "YAML file of settings (listen, name, memory, threads, "
                  "backend, cache-dir, cache-size, max-message, metrics, "
                  "announce, tls: {ca, cert, key}); flags given override it "
                  "(docs/packaging.md)");
  cmd->callback([a, cmd] {
    Status s = Status::Ok();
    if (!a->config.empty()) s = ApplyConfig(*cmd, a.get());
    if (s.ok()) s = RunWorker(*a);
    throw CommandExit(ReportStatus(s));
  });
}

}  // namespace shoal
