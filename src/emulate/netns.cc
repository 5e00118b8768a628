#include "emulate/netns.h"

#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

namespace shoal {

namespace {

// A /24 and an address as host-order integers.
bool ParseIpv4(const std::string& s, uint32_t* out) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return false;
  *out = ntohl(a.s_addr);
  return true;
}

std::string Ipv4String(uint32_t v) {
  in_addr a{};
  a.s_addr = htonl(v);
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &a, buf, sizeof(buf));
  return buf;
}

bool Private(uint32_t v) {
  return (v >> 24) == 10 || (v >> 20) == ((172u << 4) | 1) ||
         (v >> 16) == ((192u << 8) | 168);
}

// Runs argv; the child's stderr (and stdout) come back in `output`.
Status RunCapture(const std::vector<std::string>& argv, std::string* output) {
  int fds[2];
  if (pipe(fds) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return Internal(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) {
    if (output->size() < (1 << 20)) output->append(buf, n);
  }
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return Status::Ok();
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  while (!output->empty() && output->back() == '\n') output->pop_back();
  return Unavailable("'" + cmd + "' failed" +
                     (WIFEXITED(st) && WEXITSTATUS(st) == 127
                          ? std::string(": not found (install iproute2)")
                          : ": " + *output));
}

// The qdiscs of one shaped interface: htb at the device's rate with a
// queue of about 50 ms at that rate (a Wi-Fi driver's, give or take).
Status Shape(const std::string& ns, const std::string& dev, double bps) {
  if (bps <= 0) return Status::Ok();
  const std::string rate = std::to_string(static_cast<int64_t>(bps)) + "bit";
  const int64_t queue = std::max<int64_t>(64 << 10, bps / 8 * 0.05);
  RETURN_IF_ERROR(
      RunTool({"ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev,
               "root", "handle", "1:", "htb", "default", "10"}));
  RETURN_IF_ERROR(
      RunTool({"ip",   "netns", "exec",   ns,   "tc",      "class", "add",
               "dev",  dev,     "parent", "1:", "classid", "1:10",  "htb",
               "rate", rate,    "ceil",   rate, "quantum", "1514"}));
  return RunTool({"ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev,
                  "parent", "1:10", "handle", "10:", "bfifo", "limit",
                  std::to_string(queue)});
}

// The shared medium: everything that enters the bridge, from any device or
// this host, is redirected through one ifb device, `air`, shaped at half the
// channel's rate. A frame crosses the bridge once, but on Wi-Fi it goes up
// to the access point and down again: two airtimes, so half the rate.
Status ShareMedium(const std::string& b, size_t devices, double medium_bps) {
  RETURN_IF_ERROR(
      RunTool({"ip", "-n", b, "link", "add", "name", "air", "type", "ifb"}));
  RETURN_IF_ERROR(RunTool({"ip", "-n", b, "link", "set", "air", "up"}));
  RETURN_IF_ERROR(Shape(b, "air", medium_bps / 2));
  std::vector<std::string> ports = {"uplink"};
  for (size_t i = 0; i < devices; ++i)
    ports.push_back("dev" + std::to_string(i));
  for (const auto& port : ports) {
    RETURN_IF_ERROR(RunTool({"ip", "netns", "exec", b, "tc", "qdisc", "add",
                             "dev", port, "handle", "ffff:", "ingress"}));
    // u32 matching everything: this kernel has no matchall classifier.
    RETURN_IF_ERROR(
        RunTool({"ip",     "netns",  "exec",   b,          "tc",    "filter",
                 "add",    "dev",    port,     "parent",   "ffff:", "protocol",
                 "all",    "u32",    "match",  "u32",      "0",     "0",
                 "action", "mirred", "egress", "redirect", "dev",   "air"}));
  }
  return Status::Ok();
}

std::string BridgeNs(const std::string& tag) { return "shoal-" + tag + "-net"; }
std::string HostVeth(const std::string& tag) { return "shh" + tag; }

}  // namespace

Status RunTool(const std::vector<std::string>& argv) {
  std::string out;
  return RunCapture(argv, &out);
}

std::string NetnsName(const std::string& tag, int i) {
  return "shoal-" + tag + "-" + std::to_string(i);
}

std::string NetnsPath(const std::string& name) { return "/run/netns/" + name; }

Status NetnsAvailable() {
  if (geteuid() != 0) {
    return FailedPrecondition(
        "network namespaces need root (run as root, or use --mode transport, "
        "which shapes links in the workers and needs no privileges)");
  }
  const std::string probe = "shoal-probe-" + std::to_string(getpid());
  Status s = RunTool({"ip", "netns", "add", probe});
  if (!s.ok()) {
    return FailedPrecondition("cannot create a network namespace: " +
                              s.message());
  }
  s = RunTool(
      {"ip", "-n", probe, "link", "add", "name", "probebr", "type", "bridge"});
  if (s.ok()) {
    s = RunTool({"ip", "-n", probe, "link", "add", "name", "probe0", "type",
                 "veth", "peer", "name", "probe1"});
  }
  if (s.ok()) {
    s = RunTool({"ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev",
                 "probe0", "root", "handle", "1:", "htb"});
  }
  RunTool({"ip", "netns", "del", probe});
  if (!s.ok()) {
    return FailedPrecondition(
        "this kernel cannot make the emulated network (bridge, veth, htb): " +
        s.message());
  }
  return Status::Ok();
}

StatusOr<std::string> NetnsSubnetOf(const std::vector<NetnsDevice>& devs) {
  if (devs.empty()) return InvalidArgument("no devices");
  std::set<uint32_t> seen;
  uint32_t net = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    const NetnsDevice& d = devs[i];
    uint32_t v = 0;
    if (!ParseIpv4(d.ip, &v) || !Private(v)) {
      return InvalidArgument(
          "device " + d.name + " has address host '" + d.ip +
          "': --mode netns gives each device its own IPv4 address in a "
          "private range (10.x, 172.16-31.x or 192.168.x), e.g. 10.77.0.2");
    }
    if (i == 0) net = v & 0xffffff00u;
    if ((v & 0xffffff00u) != net) {
      return InvalidArgument("device " + d.name + "'s address " + d.ip +
                             " is not in " + Ipv4String(net) +
                             "/24 with device " + devs[0].name +
                             "'s: --mode netns puts every device on one /24");
    }
    const uint32_t host = v & 0xff;
    if (host == 0 || host == 1 || host == 255) {
      return InvalidArgument("device " + d.name + "'s address " + d.ip +
                             " is the subnet's ." + std::to_string(host) +
                             " (reserved: .0 and .255 by IP, .1 for this "
                             "host's side); use .2 to .254");
    }
    if (!seen.insert(v).second) {
      return InvalidArgument("device " + d.name + " has address " + d.ip +
                             ", which another device already has");
    }
  }
  return Ipv4String(net) + "/24";
}

namespace {

// Never take over a network this host is on.
Status CheckSubnetFree(const std::string& subnet, uint32_t net) {
  std::string addrs;
  RETURN_IF_ERROR(RunCapture({"ip", "-4", "-o", "addr", "show"}, &addrs));
  std::istringstream lines(addrs);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream w(line);
    std::string idx, ifname, family, cidr;
    w >> idx >> ifname >> family >> cidr;
    const auto slash = cidr.find('/');
    uint32_t a = 0;
    if (slash == std::string::npos || !ParseIpv4(cidr.substr(0, slash), &a)) {
      continue;
    }
    const int len = std::atoi(cidr.c_str() + slash + 1);
    const int shorter = std::min(len, 24);
    const uint32_t mask = shorter == 0 ? 0 : ~0u << (32 - shorter);
    if ((a & mask) == (net & mask)) {
      return FailedPrecondition(
          "the devices' subnet " + subnet + " overlaps " + cidr + " on " +
          ifname +
          ", a network this host is on: give the devices addresses in a "
          "private subnet of their own (e.g. 10.77.0.0/24)");
    }
  }
  return Status::Ok();
}

// Runs each command in turn, up to the first that fails.
Status RunTools(const std::vector<std::vector<std::string>>& cmds) {
  for (const auto& cmd : cmds) RETURN_IF_ERROR(RunTool(cmd));
  return Status::Ok();
}

// The bridge's namespace, its bridge, and the veth pair from this host to
// it, this host's end at `l.host_ip`.
Status MakeBridge(const NetnsLayout& l) {
  const std::string& b = l.bridge_ns;
  return RunTools(
      {{"ip", "netns", "add", b},
       {"ip", "-n", b, "link", "set", "lo", "up"},
       {"ip", "-n", b, "link", "add", "name", "br0", "type", "bridge"},
       {"ip", "-n", b, "link", "set", "br0", "up"},
       {"ip", "link", "add", "name", HostVeth(l.tag), "type", "veth", "peer",
        "name", "uplink", "netns", b},
       {"ip", "-n", b, "link", "set", "uplink", "master", "br0", "up"},
       {"ip", "addr", "add", l.host_ip + "/24", "dev", HostVeth(l.tag)},
       {"ip", "link", "set", HostVeth(l.tag), "up"}});
}

// Device `i`'s namespace `ns`, its eth0 on the bridge's port `dev<i>`, both
// ends shaped at its bandwidth.
Status AddDevice(const std::string& b, const std::string& ns, size_t i,
                 const NetnsDevice& dev) {
  const std::string port = "dev" + std::to_string(i);
  RETURN_IF_ERROR(
      RunTools({{"ip", "netns", "add", ns},
                {"ip", "-n", ns, "link", "set", "lo", "up"},
                {"ip", "-n", b, "link", "add", "name", port, "type", "veth",
                 "peer", "name", "eth0", "netns", ns},
                {"ip", "-n", b, "link", "set", port, "master", "br0", "up"},
                {"ip", "-n", ns, "addr", "add", dev.ip + "/24", "dev", "eth0"},
                {"ip", "-n", ns, "link", "set", "eth0", "up"}}));
  // Uplink: what the device sends; downlink: the bridge's port toward it.
  RETURN_IF_ERROR(Shape(ns, "eth0", dev.bandwidth_bps));
  return Shape(b, port, dev.bandwidth_bps);
}

// The bridge, every device's namespace and the shared medium; stops at the
// first command that fails.
Status MakeNetwork(const std::vector<NetnsDevice>& devs, double medium_bps,
                   NetnsLayout* l) {
  RETURN_IF_ERROR(MakeBridge(*l));
  for (size_t i = 0; i < devs.size(); ++i) {
    const std::string ns = NetnsName(l->tag, static_cast<int>(i));
    l->device_ns.push_back(ns);
    RETURN_IF_ERROR(AddDevice(l->bridge_ns, ns, i, devs[i]));
  }
  if (medium_bps > 0) {
    RETURN_IF_ERROR(ShareMedium(l->bridge_ns, devs.size(), medium_bps));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<NetnsLayout> NetnsUp(const std::string& tag,
                              const std::vector<NetnsDevice>& devs,
                              double medium_bps) {
  ASSIGN_OR_RETURN(std::string subnet, NetnsSubnetOf(devs));
  uint32_t net = 0;
  ParseIpv4(subnet.substr(0, subnet.find('/')), &net);
  RETURN_IF_ERROR(NetnsAvailable());
  // What a previous run of this cluster left (a killed `cluster up`).
  NetnsDown(tag, static_cast<int>(devs.size()));
  RETURN_IF_ERROR(CheckSubnetFree(subnet, net));
  NetnsLayout l;
  l.tag = tag;
  l.subnet = subnet;
  l.host_ip = Ipv4String(net | 1);
  l.bridge_ns = BridgeNs(tag);
  if (Status s = MakeNetwork(devs, medium_bps, &l); !s.ok()) {
    NetnsDown(tag, static_cast<int>(devs.size()));
    return s.WithContext("making the emulated network " + subnet);
  }
  return l;
}

Status NetnsDown(const std::string& tag, int devices) {
  Status first;
  auto del = [&](const std::string& ns) {
    if (!std::filesystem::exists(NetnsPath(ns))) return;
    Status s = RunTool({"ip", "netns", "del", ns});
    if (first.ok()) first = s;
  };
  for (int i = 0; i < devices; ++i) del(NetnsName(tag, i));
  // The kernel frees a namespace's interfaces some time after `netns del`:
  // the host's end goes now, so a `cluster up` right after can make it anew.
  if (std::filesystem::exists("/sys/class/net/" + HostVeth(tag))) {
    Status s = RunTool({"ip", "link", "del", HostVeth(tag)});
    if (first.ok()) first = s;
  }
  del(BridgeNs(tag));
  return first;
}

}  // namespace shoal
