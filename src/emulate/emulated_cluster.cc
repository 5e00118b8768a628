#include "emulate/emulated_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster/cpu_quota.h"
#include "cluster/swap.h"
#include "emulate/calibrate.h"
#include "emulate/device_limits.h"
#include "emulate/netns.h"
#include "emulate/worker_pids.h"
#include "runtime/wire.h"
#include "security/certs.h"
#include "sim/latency_model.h"
#include "util/net_address.h"
#include "util/units.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// 62, 0.5, 8.83: a figure as a person writes it.
std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// Whether the worker we started `since` answers on `address`. A worker that
// has been up for longer is someone else's on the same port (ours failed to
// bind), so it does not count.
bool Healthy(const std::string& address, Clock::time_point since,
             const TlsIdentity* tls) {
  auto stub = rpc::Worker::NewStub(MakeChannel(address, 1 << 20, tls));
  rpc::HealthRequest req;
  req.set_protocol(kProtocolVersion);
  rpc::HealthReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(500));
  if (!stub->Health(&ctx, req, &rep).ok()) return false;
  const auto ours = std::chrono::duration_cast<std::chrono::milliseconds>(
                        Clock::now() - since)
                        .count();
  return rep.uptime_ms() <= ours + 50;
}

// `tls: {dir: ...}`: the CA, the coordinator's certificate and each
// device's, made where missing, so that a TLS cluster is one command.
Status IssueMissingCerts(const Cluster& c, std::ostream& out) {
  const std::string& dir = c.tls_dir;
  const bool have_cert = fs::exists(CaCertPath(dir)),
             have_key = fs::exists(CaKeyPath(dir));
  if (have_cert != have_key) {
    return FailedPrecondition(
        (have_cert ? CaKeyPath(dir) : CaCertPath(dir)) +
        " is missing while its pair is there: restore it, or remove both to "
        "make a new CA (every certificate of " +
        dir +
        " would then need "
        "issuing again)");
  }
  if (!have_cert) {
    RETURN_IF_ERROR(InitCa(dir).status());
    out << "tls: made a cluster CA in " << dir << "\n";
  }
  std::vector<std::pair<std::string, TlsRole>> names = {
      {"coordinator", TlsRole::kCoordinator}};
  for (const auto& d : c.devices) names.push_back({d.name, TlsRole::kDevice});
  for (const auto& [name, role] : names) {
    const TlsPaths p = IssuedPaths(dir, name);
    if (fs::exists(p.cert) || fs::exists(p.key)) continue;
    IssueOptions o;
    o.role = role;
    RETURN_IF_ERROR(IssueCert(dir, name, o).status());
    out << "tls: issued " << p.cert << " (" << RoleName(role) << ")\n";
  }
  return Status::Ok();
}

// What starting every device's worker shares.
struct UpContext {
  UpContext(const std::string& f, const ClusterUpOptions& o, const Cluster& cl)
      : file(f), opts(o), c(cl) {}

  const std::string& file;
  const ClusterUpOptions& opts;
  const Cluster& c;
  bool netns = false;
  std::string state;        // ClusterStateDir
  std::string self;         // the binary run as `shoal worker`
  std::string medium_file;  // transport mode's shared medium
  std::shared_ptr<const TlsIdentity> tls;
  std::vector<std::string> device_ns;  // per device; netns mode only
  pid_t parent = 0;
  double dilation = 1;  // ChooseDilation
};

// The coordinator's identity of the cluster's tls block (null without one),
// after checking that each device has a device certificate of its own.
StatusOr<std::shared_ptr<const TlsIdentity>> LoadClusterTls(
    const Cluster& c, const std::string& file) {
  std::shared_ptr<const TlsIdentity> tls;
  if (!c.tls.any()) return tls;
  auto id = LoadTlsIdentity(c.tls);
  if (!id.ok()) return id.status().WithContext("the tls block of " + file);
  tls = std::move(id).value();
  for (const auto& d : c.devices) {
    if (d.tls.cert.empty() || d.tls.key.empty()) {
      return InvalidArgument(
          file + ": device " + d.name +
          " has no certificate: with a tls block of ca, cert and key, "
          "cluster up needs each device's own (tls: {cert: ..., key: ...}), "
          "or use tls: {dir: ...}");
    }
    auto dev = LoadTlsIdentity(d.tls);
    if (!dev.ok()) return dev.status().WithContext("device " + d.name);
    if (dev.value()->role != TlsRole::kDevice) {
      return InvalidArgument("device " + d.name + "'s certificate " +
                             d.tls.cert + " has the " +
                             RoleName(dev.value()->role) +
                             " role; a worker needs a device certificate");
    }
  }
  return tls;
}

// Devices that give a speed but no cpu run at that speed on this host.
Status CalibrateSpeeds(Cluster& c, bool recalibrate, std::ostream& out) {
  bool calibrate = false;
  for (const auto& d : c.devices) calibrate |= d.cpu_from_speed;
  if (!calibrate) return Status::Ok();
  ASSIGN_OR_RETURN(HostRate host, CachedHostRate(recalibrate));
  char line[320];
  std::snprintf(
      line, sizeof(line),
      "calibration (%s %s): one core of this host does %.1f GMAC/s (a "
      "3x3 conv %.1f, an fc layer %.1f) and copies %.1f GB/s; a "
      "Raspberry Pi 3 (speed 1) %.2f GMAC/s and %.1f GB/s: speed 1 "
      "computes at %.4f of a host core, and its worker runs at %.4f\n",
      host.cached ? "kept in" : "measured, kept in", HostRateFile().c_str(),
      host.macs_per_cpu_second / 1e9, host.conv_macs_per_cpu_second / 1e9,
      host.gemm_macs_per_cpu_second / 1e9, host.copy_bytes_per_cpu_second / 1e9,
      kPi3MacsPerSecond / 1e9, kPi3CopyBytesPerSecond / 1e9,
      CpuFractionForSpeed(1.0, host), SystemFractionForSpeed(1.0, 1, host));
  out << line;
  for (auto& d : c.devices) {
    if (!d.cpu_from_speed) continue;
    d.cpu = CpuFractionForSpeed(d.speed, host);
    if (d.system_cpu == 0) {
      d.system_cpu = SystemFractionForSpeed(d.speed, d.cores, host);
    }
  }
  return Status::Ok();
}

// The time dilation of the cluster: `--dilation`, or from the host's
// calibration when its named boards need more of this host than it has in
// real time (emulate/calibrate.h). Devices paced by a share of a host core
// (`cpu`) get K times less of it, so every device slows alike.
StatusOr<double> ChooseDilation(Cluster& c, const ClusterUpOptions& o,
                                std::ostream& out) {
  bool boards = false;
  for (const auto& d : c.devices) {
    boards |= d.OnBoardRates();
  }
  double k = o.dilation;
  if (k != 0 && !(k >= 1 && k <= 1000)) {
    return InvalidArgument("--dilation must be between 1 and 1000");
  }
  if (k == 0 && boards) {
    ASSIGN_OR_RETURN(HostRate host, CachedHostRate(o.recalibrate));
    const int cores =
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    const double need = BoardHostCores(c, host);
    k = DilationFor(need, cores);
    char line[400];
    if (k > 1) {
      std::snprintf(line, sizeof(line),
                    "time dilation %g: in real time the boards would need "
                    "%.2f cores of this host (to compute and to move their "
                    "messages' bytes), which has %d (half of them for that); "
                    "every emulated time (compute, links, timeouts) runs %gx "
                    "slower, and bench and serve report board time "
                    "(--dilation K overrides)\n",
                    k, need, cores, k);
    } else {
      std::snprintf(line, sizeof(line),
                    "real time: the boards need %.2f cores of this host's "
                    "%d to compute and move their messages' bytes at their "
                    "classes' speed (no dilation; --dilation K stretches "
                    "every emulated time)\n",
                    need, cores);
    }
    out << line;
  } else if (k > 1) {
    out << "time dilation " << k << " (--dilation): every emulated time runs "
        << k << "x slower; bench and serve report board time\n";
  }
  if (k == 0) k = 1;
  if (k != 1) {
    for (auto& d : c.devices) {
      d.cpu /= k;
      d.system_cpu /= k;
    }
  }
  return k;
}

void PrintNetnsLayout(const Cluster& c, const NetnsLayout& l,
                      const std::string& tag, std::ostream& out) {
  out << "network " << l.subnet << ": this host is " << l.host_ip
      << "; each device in a namespace of its own (" << NetnsName(tag, 0)
      << "...), its bandwidth shaped by the kernel (htb, both ways), its "
         "latency by the worker's transport (no netem here)\n";
  if (c.network.shared) {
    out << "shared medium: every frame into the bridge, from any device "
           "or this host, passes one channel shaped at "
        << HumanBitRate(c.network.bandwidth_bps / 2) << " (htb on an ifb "
        << "device): half of " << HumanBitRate(c.network.bandwidth_bps)
        << ", as Wi-Fi carries it up to the access point and down\n";
  }
}

// The network namespaces, when they are not up already (a `cluster up`
// that adds the workers missing from a running cluster keeps them); returns
// each device's namespace.
StatusOr<std::vector<std::string>> SetUpNetns(const Cluster& c,
                                              const std::string& file,
                                              const std::string& state,
                                              std::ostream& out) {
  std::vector<NetnsDevice> nd;
  bool any_running = false;
  for (const auto& d : c.devices) {
    ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(d.address, "device " + d.name +
                                                               "'s address"));
    if (hp.port < 1) {
      return InvalidArgument("device " + d.name + "'s address '" + d.address +
                             "' needs a port");
    }
    nd.push_back({d.name, hp.host, d.link.bandwidth_bps});
    any_running |= OurWorker(ReadPid(state + "/" + d.name + ".pid"), d.name);
  }
  const std::string tag = ClusterTag(file);
  const std::string marker = state + "/netns";
  if (!any_running || !fs::exists(marker)) {
    ASSIGN_OR_RETURN(
        NetnsLayout l,
        NetnsUp(tag, nd, c.network.shared ? c.network.bandwidth_bps : 0));
    std::ofstream(marker) << c.devices.size() << "\n";
    PrintNetnsLayout(c, l, tag, out);
  }
  std::vector<std::string> device_ns(c.devices.size());
  for (size_t i = 0; i < c.devices.size(); ++i) {
    device_ns[i] = NetnsName(tag, static_cast<int>(i));
  }
  return device_ns;
}

// Transport mode starts every worker on this machine's loopback.
Status CheckLocalAddress(const DeviceSpec& d) {
  const auto colon = d.address.rfind(':');
  const std::string host = d.address.substr(0, colon);
  if (colon == std::string::npos ||
      (host != "127.0.0.1" && host != "localhost")) {
    return InvalidArgument(
        "device " + d.name + " has address '" + d.address +
        "': cluster up starts workers on this machine, on 127.0.0.1:PORT "
        "(or, as root with --mode netns, each on a private address of its "
        "own)");
  }
  return Status::Ok();
}

// A paced device's worker gets the cores its cpu share rounds up to; an
// emulated board, its share of this host's cores (its time is its class's,
// so more threads than cores would only contend).
int WorkerThreads(const DeviceSpec& d, size_t devices) {
  if (d.OnBoardRates()) {
    const int host = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, std::min(d.cores, host / static_cast<int>(devices)));
  }
  return d.cpu > 0 ? std::max(1, std::min(d.cores,
                                          static_cast<int>(std::ceil(d.cpu))))
                   : d.cores;
}

// The `shoal worker` command line that emulates device `d`.
std::vector<std::string> WorkerArgs(const UpContext& u, const DeviceSpec& d,
                                    int threads) {
  std::vector<std::string> args = {
      u.self, "worker", "--listen", d.address, "--name", d.name, "--memory",
      std::to_string(d.memory_bytes), "--threads", std::to_string(threads),
      // Its own cache: an emulated device does not have what another
      // was sent.
      "--cache-dir", u.state + "/" + d.name + ".weights",
      // Emulated devices stay off the LAN's DNS-SD: a namespace's worker
      // would be announced by the host's avahi-daemon with the host's
      // addresses, which do not reach it.
      "--no-announce"};
  if (d.OnBoardRates()) {
    args.push_back("--board");
    args.push_back(d.board->name);
    args.push_back("--board-speed");
    args.push_back(std::to_string(d.board_speed));
  } else if (d.cpu > 0) {  // pacing makes short tasks as slow as long ones
    args.push_back("--cpu-fraction");
    args.push_back(std::to_string(d.cpu));
  }
  if (FrameworkMemoryOf(d.board) != nullptr) {  // pages what does not fit
    args.push_back("--swap-as");
    args.push_back(d.board->name);
  }
  if (u.dilation != 1) {
    args.push_back("--dilation");
    args.push_back(std::to_string(u.dilation));
  }
  if (d.link.bandwidth_bps > 0 && !u.netns) {  // netns: the kernel's htb
    args.push_back("--link-bandwidth");
    args.push_back(std::to_string(d.link.bandwidth_bps) + "bit");
  }
  if (d.link.latency_s > 0) {
    args.push_back("--link-latency");
    args.push_back(std::to_string(d.link.latency_s) + "s");
  }
  if (u.c.network.shared && !u.netns) {
    args.push_back("--medium");
    args.push_back(u.medium_file);
    args.push_back("--medium-bandwidth");
    args.push_back(std::to_string(u.c.network.bandwidth_bps) + "bit");
  }
  if (u.tls) {
    for (const auto& [flag, path] :
         {std::pair{"--tls-ca", d.tls.ca}, std::pair{"--tls-cert", d.tls.cert},
          std::pair{"--tls-key", d.tls.key}}) {
      args.push_back(flag);
      args.push_back(fs::absolute(path).string());
    }
    if (!d.tls.crl.empty()) {
      args.push_back("--tls-crl");
      args.push_back(fs::absolute(d.tls.crl).string());
    }
  }
  return args;
}

// Forks the worker of device `index` into its cgroups and namespace, its
// output to `log`; returns its pid.
StatusOr<pid_t> SpawnWorker(const UpContext& u, size_t index,
                            const std::vector<std::string>& dirs,
                            std::vector<std::string> args,
                            const std::string& log) {
  pid_t pid = fork();
  if (pid < 0) return Internal("fork failed");
  if (pid == 0) {
    setsid();
    if (u.opts.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != u.parent) _exit(1);
    }
    for (const auto& dir : dirs) {
      std::ofstream(dir + "/cgroup.procs") << getpid();
    }
    if (u.netns) {
      const int nsfd = open(NetnsPath(u.device_ns[index]).c_str(), O_RDONLY);
      if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0) _exit(126);
      close(nsfd);
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
    execv(u.self.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits up to 10 s for the worker `pid` to answer on the device's address;
// fails with the last line of its log.
Status AwaitWorker(const DeviceSpec& d, pid_t pid, Clock::time_point spawned,
                   const TlsIdentity* tls, const std::string& log) {
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) break;
    up = Healthy(d.address, spawned, tls);
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!up) {
    std::string tail;
    std::ifstream lf(log);
    for (std::string l; std::getline(lf, l);) tail = l;
    return Unavailable("worker " + d.name + " did not come up on " + d.address +
                       " (is the port taken?); " + log +
                       (tail.empty() ? "" : " says: " + tail));
  }
  return Status::Ok();
}

void PrintDeviceUp(const UpContext& u, size_t index, int threads,
                   const DeviceUpReport& rep, std::ostream& out) {
  const DeviceSpec& d = u.c.devices[index];
  const bool netns = u.netns;
  out << "  " << d.name << " on " << d.address
      << (netns ? " in " + u.device_ns[index] : std::string()) << " (pid "
      << rep.pid << ", " << Plural(threads, "thread") << "): cpu "
      << rep.cpu_note << "; memory " << rep.memory_note << "; link "
      << (d.link.bandwidth_bps > 0
              ? HumanBitRate(d.link.bandwidth_bps) +
                    (netns ? " (shaped by the kernel)" : "")
              : std::string("unshaped"))
      << (d.link.latency_s > 0 ? " + " + Num(d.link.latency_s * 1e3) +
                                     " ms (shaped by the worker's transport)"
                               : std::string())
      << (u.tls ? "; mutual TLS as " + d.tls.cert : std::string()) << "\n";
}

// Starts device `index`'s worker, unless ours runs already, and waits until
// it answers.
StatusOr<DeviceUpReport> StartDevice(const UpContext& u, size_t index,
                                     std::ostream& out) {
  const DeviceSpec& d = u.c.devices[index];
  DeviceUpReport rep;
  rep.name = d.name;
  if (!u.netns) RETURN_IF_ERROR(CheckLocalAddress(d));
  const std::string pidfile = u.state + "/" + d.name + ".pid";
  if (OurWorker(ReadPid(pidfile), d.name)) {
    rep.pid = ReadPid(pidfile);
    rep.already_running = true;
    out << "  " << d.name << ": already running (pid " << rep.pid << ")\n";
    return rep;
  }
  const std::vector<std::string> dirs = LimitDevice(u.file, d, &rep);
  const int threads = WorkerThreads(d, u.c.devices.size());
  std::vector<std::string> args = WorkerArgs(u, d, threads);
  const std::string log = u.state + "/" + d.name + ".log";
  const auto spawned = Clock::now();
  ASSIGN_OR_RETURN(const pid_t pid,
                   SpawnWorker(u, index, dirs, std::move(args), log));
  rep.pid = pid;
  // `cluster down` finds the worker by this file alone: a worker whose pid
  // was not written (a full disk) would outlive it and keep its port.
  std::ofstream pf(pidfile);
  pf << pid;
  pf.flush();
  std::ofstream cg(u.state + "/" + d.name + ".cgroups");
  for (const auto& x : dirs) cg << x << "\n";
  cg.flush();
  if (!pf || !cg) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Unavailable("cannot write " +
                       (pf ? u.state + "/" + d.name + ".cgroups" : pidfile) +
                       " (is the disk full?): stopped device " + d.name +
                       "'s worker, which `cluster down` could not have found");
  }
  RETURN_IF_ERROR(AwaitWorker(d, pid, spawned, u.tls.get(), log));
  PrintDeviceUp(u, index, threads, rep, out);
  return rep;
}

}  // namespace

std::string ClusterTag(const std::string& file) {
  return HashString(fs::absolute(file).string()).substr(0, 8);
}

std::string ClusterStateDir(const std::string& file) {
  std::error_code ec;
  const std::string abs = fs::absolute(file, ec).string();
  return "/tmp/shoal-cluster-" + HashString(abs).substr(0, 12);
}

StatusOr<std::vector<DeviceUpReport>> ClusterUp(const std::string& file,
                                                const ClusterUpOptions& opts,
                                                std::ostream& out) {
  ASSIGN_OR_RETURN(Cluster c, LoadCluster(file));
  const bool netns = opts.mode == "netns";
  if (!netns && opts.mode != "transport") {
    return InvalidArgument("cluster up --mode '" + opts.mode +
                           "': transport or netns");
  }
  UpContext u(file, opts, c);
  u.netns = netns;
  u.state = ClusterStateDir(file);
  fs::create_directories(u.state);
  // With TLS, the workers get their certificates, and this process checks
  // that they came up with the coordinator's.
  if (!c.tls_dir.empty()) RETURN_IF_ERROR(IssueMissingCerts(c, out));
  ASSIGN_OR_RETURN(u.tls, LoadClusterTls(c, file));
  RETURN_IF_ERROR(CalibrateSpeeds(c, opts.recalibrate, out));
  ASSIGN_OR_RETURN(u.dilation, ChooseDilation(c, opts, out));
  u.device_ns.resize(c.devices.size());
  if (netns) {
    // The kernel shapes bandwidth there: at the dilated rates.
    Cluster shaped = c;
    for (auto& d : shaped.devices) d.link.bandwidth_bps /= u.dilation;
    shaped.network.bandwidth_bps /= u.dilation;
    ASSIGN_OR_RETURN(u.device_ns, SetUpNetns(shaped, file, u.state, out));
  }
  u.self = opts.binary.empty() ? fs::read_symlink("/proc/self/exe").string()
                               : opts.binary;
  out << "cluster " << file << ": " << c.devices.size()
      << " workers (logs and pids in " << u.state << ")\n";
  // Transport mode: the shared medium is a clock in a file every worker
  // maps (runtime/link_shaper.h); netns mode: the kernel's, above.
  u.medium_file = u.state + "/medium";
  if (c.network.shared && !netns) {
    out << "shared medium: one channel of "
        << HumanBitRate(c.network.bandwidth_bps)
        << " for every device's sends, in the workers' transport ("
        << u.medium_file
        << "): a message to another device holds it twice its time at that "
           "rate, behind what any device holds\n";
  }
  std::vector<DeviceUpReport> reports;
  u.parent = getpid();
  for (size_t i = 0; i < c.devices.size(); ++i) {
    ASSIGN_OR_RETURN(DeviceUpReport rep, StartDevice(u, i, out));
    reports.push_back(rep);
  }
  return reports;
}

Status ClusterDown(const std::string& file, std::ostream& out, bool purge) {
  ASSIGN_OR_RETURN(Cluster c, LoadCluster(file));
  const std::string state = ClusterStateDir(file);
  int stopped = 0;
  for (const auto& d : c.devices) {
    const std::string pidfile = state + "/" + d.name + ".pid";
    const pid_t pid = ReadPid(pidfile);
    if (Alive(pid) && !OurWorker(pid, d.name)) {
      out << d.name << ": pid " << pid << " in " << pidfile
          << " is no longer its worker (it runs " << Quoted(CommandLine(pid))
          << "); left alone\n";
    } else if (Alive(pid)) {
      StopProcess(pid);
      ++stopped;
      out << "stopped " << d.name << " (pid " << pid << ")\n";
    }
    std::remove(pidfile.c_str());
    RemoveDeviceCgroups(state + "/" + d.name + ".cgroups");
  }
  if (fs::exists(state + "/netns")) {
    Status s = NetnsDown(ClusterTag(file), static_cast<int>(c.devices.size()));
    std::remove((state + "/netns").c_str());
    if (!s.ok()) return s.WithContext("removing the emulated network");
    out << "removed the emulated network\n";
  }
  out << "cluster " << file << ": " << stopped << " workers stopped\n";
  if (purge) {
    std::error_code ec;
    fs::remove_all(state, ec);
    if (ec) return Unavailable("cannot remove " + state + ": " + ec.message());
    out << "removed " << state << " (logs, weight caches)\n";
  }
  return Status::Ok();
}

}  // namespace shoal
