// Zero-config discovery over real multicast DNS, kept off every real
// network: two network namespaces joined by a veth pair (no interface of
// this host takes part), each a "host" with its own D-Bus system bus and
// avahi-daemon, as two boards on one LAN. Workers announce themselves;
// `shoal cluster scan` on the second host finds both, checks each, and
// writes a cluster file that plan and run use. Root only; skipped with the
// reason elsewhere.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster/cluster.h"
#include "discovery/dns_sd.h"
#include "discovery/worker_txt.h"
#include "emulate/netns.h"
#include "runtime/process_test_util.h"
#include "runtime/wire.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::Shell;
using testing::ShoalBinary;
using testing::SpawnLogged;

// Waits up to `seconds` for `what` to appear in the file `log`.
bool WaitForLog(const std::string& log, const std::string& what,
                double seconds) {
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(static_cast<int>(seconds * 1e3));
  while (std::chrono::steady_clock::now() < end) {
    if (ReadFile(log).find(what) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

class Discovery : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Status s = NetnsAvailable(); !s.ok()) {
      GTEST_SKIP() << "network namespaces unavailable: " << s.message();
    }
    for (const char* tool : {"/usr/bin/dbus-daemon", "/usr/sbin/avahi-daemon",
                             "/usr/bin/avahi-publish"}) {
      if (!fs::exists(tool)) {
        GTEST_SKIP() << tool
                     << " is not installed (scripts/install-deps.sh "
                        "--with-test-deps installs it)";
      }
    }
    tag_ = std::to_string(getpid());
    dir_ = fs::temp_directory_path() / ("shoal-discovery-" + tag_);
    fs::create_directories(dir_);
    // A private range no host route uses; the namespaces reach nothing else.
    net_ = "10.79." + std::to_string(getpid() % 250) + ".";
    for (int h = 0; h < 2; ++h) {
      const std::string ns = Ns(h);
      Run("ip netns add " + ns);
      made_.push_back(ns);
      Run("ip -n " + ns + " link set lo up");
    }
    Run("ip link add dsd" + tag_ + "a netns " + Ns(0) +
        " type veth peer name dsd" + tag_ + "b netns " + Ns(1));
    for (int h = 0; h < 2; ++h) {
      Run("ip -n " + Ns(h) + " addr add " + Ip(h) + "/24 dev " + Dev(h));
      Run("ip -n " + Ns(h) + " link set " + Dev(h) + " multicast on up");
      WriteBusConfig(h);
      Spawn(h, "bus" + std::to_string(h),
            "dbus-daemon --nofork --nopidfile --config-file=" + dir_ + "/bus" +
                std::to_string(h) + ".conf");
    }
    for (int h = 0; h < 2; ++h) {
      ASSERT_TRUE(WaitFor([&] { return fs::exists(Bus(h)); }, 10))
          << "D-Bus of host " << h << " did not start: "
          << ReadFile(dir_ + "/bus" + std::to_string(h) + ".log");
    }
  }

  void TearDown() override {
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
      kill(*it, SIGTERM);
      waitpid(*it, nullptr, 0);
    }
    for (const auto& ns : made_) Run("ip netns del " + ns);
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::string Ns(int h) const {
    return "shoal-dsd-" + tag_ + (h == 0 ? "-a" : "-b");
  }
  std::string Dev(int h) const { return "dsd" + tag_ + (h == 0 ? "a" : "b"); }
  std::string Ip(int h) const { return net_ + std::to_string(h + 2); }
  std::string Bus(int h) const {
    return dir_ + "/bus" + std::to_string(h) + ".sock";
  }
  // The environment a process of host h runs in: its namespace and bus.
  std::string On(int h) const {
    return "ip netns exec " + Ns(h) +
           " env DBUS_SYSTEM_BUS_ADDRESS=unix:path=" + Bus(h) + " ";
  }

  void Run(const std::string& cmd) {
    std::string out;
    EXPECT_EQ(Shell(cmd, &out), 0) << cmd << ": " << out;
  }

  template <typename F>
  bool WaitFor(F done, double seconds) {
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<int>(seconds * 1e3));
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  // A child process on host h, logging to DIR/name.log; killed at the end.
  pid_t Spawn(int h, const std::string& name, const std::string& cmd) {
    const pid_t pid = SpawnLogged({"/bin/sh", "-c", "exec " + On(h) + cmd},
                                  dir_ + "/" + name + ".log");
    EXPECT_GT(pid, 0);
    pids_.push_back(pid);
    return pid;
  }

  void Stop(pid_t pid) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    pids_.erase(std::remove(pids_.begin(), pids_.end(), pid), pids_.end());
  }

  // A system bus of the host's own, that anyone on it may use.
  void WriteBusConfig(int h) {
    std::ofstream f(dir_ + "/bus" + std::to_string(h) + ".conf");
    f << "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-BUS Bus "
         "Configuration 1.0//EN\" "
         "\"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
         "<busconfig><type>system</type><listen>unix:path="
      << Bus(h)
      << "</listen><auth>EXTERNAL</auth>"
         "<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
         "<allow send_destination=\"*\"/><allow receive_sender=\"*\"/>"
         "</policy></busconfig>\n";
  }

  // The host's avahi-daemon, on its veth only, with a /run of its own (its
  // pid file and socket would clash with the host's own daemon's).
  void StartAvahi(int h) {
    const std::string conf = dir_ + "/avahi" + std::to_string(h) + ".conf";
    std::ofstream f(conf);
    f << "[server]\nhost-name=shoal-dsd-host" << h
      << "\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=" << Dev(h)
      << "\nenable-dbus=yes\n[publish]\npublish-hinfo=no\n"
         "publish-workstation=no\n";
    f.close();
    const std::string log = dir_ + "/avahi" + std::to_string(h) + ".log";
    Spawn(h, "avahi" + std::to_string(h),
          "sh -c 'mount -t tmpfs tmpfs /run && mkdir /run/avahi-daemon && "
          "exec avahi-daemon --no-chroot --no-drop-root --no-rlimits -f " +
              conf + "'");
    ASSERT_TRUE(WaitForLog(log, "Server startup complete", 10))
        << ReadFile(log);
  }

  pid_t StartWorker(int h, const std::string& name, const std::string& flags) {
    const std::string log = dir_ + "/" + name + ".log";
    const pid_t pid =
        Spawn(h, name,
              ShoalBinary() + " worker --name " + name + " --cache-dir " +
                  dir_ + "/" + name + ".weights " + flags);
    EXPECT_TRUE(WaitForLog(log, "listening on port", 20)) << ReadFile(log);
    return pid;
  }

  std::string tag_, dir_, net_;
  std::vector<std::string> made_;
  std::vector<pid_t> pids_;
};

TEST_F(Discovery, ScanFindsAnnouncingWorkersAndWritesAClusterFile) {
  StartAvahi(0);
  StartAvahi(1);
  // pi-a on its host's address, pi-b on every address of its host.
  const pid_t a = StartWorker(
      0, "pi-a", "--listen " + Ip(0) + ":7000 --memory 512MiB --threads 2");
  StartWorker(1, "pi-b", "--listen 0.0.0.0:7000 --memory 1GiB --threads 1");
  // On loopback: not announced unless asked.
  StartWorker(1, "pi-quiet", "--listen 127.0.0.1:7001");
  // A device of another release that answers discovery but refuses
  // connections: its announcement only.
  Spawn(0, "old-pi",
        "avahi-publish -s old-pi _shoal._tcp 7999 txtvers=1 name=old-pi "
        "cores=4 memory=0 version=0.0.9 protocol=2 tls=off");
  for (const char* w : {"pi-a", "pi-b"}) {
    EXPECT_TRUE(
        WaitForLog(dir_ + "/" + w + ".log",
                   "announcing " + std::string(w) + " on the network as", 10))
        << ReadFile(dir_ + "/" + w + ".log");
  }
  EXPECT_TRUE(WaitForLog(dir_ + "/old-pi.log", "Established", 10))
      << ReadFile(dir_ + "/old-pi.log");

  const std::string file = dir_ + "/found.yaml";
  std::string out;
  EXPECT_EQ(
      Shell(On(1) + ShoalBinary() + " cluster scan --timeout 3 -o " + file,
            &out),
      0)
      << out;
  // name, address:port, cores, memory, version
  for (const std::string& row :
       {"pi-a    " + Ip(0) + ":7000  2      512MiB",
        "pi-b    " + Ip(1) + ":7000  1      1GiB",
        "old-pi  " + Ip(0) + ":7999  4      unlimited  0.0.9 (protocol 2)"}) {
    EXPECT_NE(out.find(row), std::string::npos) << row << "\n" << out;
  }
  EXPECT_NE(out.find("0.1.0 (protocol " + std::to_string(kProtocolVersion)),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("not usable: speaks shoal protocol 2 (shoal 0.0.9)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("refuses connections at " + Ip(0) + ":7999"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("pi-quiet"), std::string::npos) << out;
  EXPECT_NE(out.find("3 workers found, 2 usable"), std::string::npos) << out;

  auto c = LoadCluster(file);
  ASSERT_TRUE(c.ok()) << c.status().message() << "\n" << ReadFile(file);
  ASSERT_EQ(c->devices.size(), 2u) << ReadFile(file);
  EXPECT_EQ(c->devices[0].name, "pi-a");
  EXPECT_EQ(c->devices[0].address, Ip(0) + ":7000");
  EXPECT_EQ(c->devices[0].memory_bytes, int64_t{512} << 20);
  EXPECT_EQ(c->devices[0].cores, 2);
  EXPECT_EQ(c->devices[1].name, "pi-b");
  EXPECT_EQ(c->devices[1].address, Ip(1) + ":7000");
  EXPECT_EQ(c->devices[1].memory_bytes, int64_t{1} << 30);

  // The file is a cluster as any other: plan, then run on the workers.
  const std::string plan = dir_ + "/lenet-lop.json";
  EXPECT_EQ(Shell(ShoalBinary() + " plan lenet5 --cluster " + file +
                      " --strategy lop -o " + plan,
                  &out),
            0)
      << out;
  EXPECT_EQ(Shell(On(1) + ShoalBinary() + " run --plan " + plan +
                      " --cluster " + file + " --check --timeout-ms 20000",
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;

  // A worker that stops withdraws its announcement.
  Stop(a);
  EXPECT_EQ(Shell(On(1) + ShoalBinary() + " cluster scan --timeout 2", &out), 0)
      << out;
  EXPECT_EQ(out.find("pi-a"), std::string::npos) << out;
  EXPECT_NE(out.find("pi-b"), std::string::npos) << out;
}

// `serve --discover` with no cluster file: it plans on the board that
// announces itself, plans again on two when a second appears, and on one
// when the first stops.
TEST_F(Discovery, ServePlansAgainWhenABoardAppearsOrGoes) {
  StartAvahi(0);
  StartAvahi(1);
  const pid_t a =
      StartWorker(0, "pi-a", "--listen " + Ip(0) + ":7000 --threads 1");
  ASSERT_TRUE(
      WaitForLog(dir_ + "/pi-a.log", "announcing pi-a on the network as", 10))
      << ReadFile(dir_ + "/pi-a.log");
  const std::string log = dir_ + "/serve.log";
  Spawn(1, "serve",
        ShoalBinary() +
            " serve --discover 1 --model lenet5 --strategy lop --listen "
            "127.0.0.1:0 --monitor-interval 0.5 --cooldown 0");
  ASSERT_TRUE(WaitForLog(log, "plan: generation 1 (lop on 1 device", 40))
      << ReadFile(log);
  EXPECT_NE(ReadFile(log).find("DNS-SD: 1 worker announces itself"),
            std::string::npos)
      << ReadFile(log);

  StartWorker(1, "pi-b", "--listen 0.0.0.0:7000 --threads 1");
  EXPECT_TRUE(WaitForLog(log, "on 2 devices", 40)) << ReadFile(log);
  EXPECT_NE(
      ReadFile(log).find("DNS-SD lists a new device pi-b (" + Ip(1) + ":7000)"),
      std::string::npos)
      << ReadFile(log);

  // The first board goes: a plan without it (DNS-SD drops it from the
  // members too: Membership.ApplyAddsRemovesAndListsAgain).
  const size_t before = ReadFile(log).size();
  Stop(a);
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string after = ReadFile(log).substr(before);
        return after.find("(lop on 1 device)") != std::string::npos &&
               after.find("pi-a 1.00 -> gone") != std::string::npos;
      },
      40))
      << ReadFile(log);
}

TEST_F(Discovery, WithoutAvahiScanFailsSayingHowToStartItAndWorkersServe) {
  // Host 1 has its D-Bus but no avahi-daemon yet.
  std::string out;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(
      Shell(On(1) + ShoalBinary() + " cluster scan -o " + dir_ + "/none.yaml",
            &out),
      0)
      << out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_NE(out.find("avahi-daemon is not running"), std::string::npos) << out;
  EXPECT_NE(out.find("systemctl start avahi-daemon"), std::string::npos) << out;
  EXPECT_NE(out.find("avahi-daemon -D"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir_ + "/none.yaml"));
  // No D-Bus at all: the same answer.
  EXPECT_NE(Shell("DBUS_SYSTEM_BUS_ADDRESS=unix:path=" + dir_ +
                      "/no-bus.sock " + ShoalBinary() + " cluster scan",
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("avahi-daemon is not running"), std::string::npos) << out;

  // A worker serves without it, says once why it is not announced...
  StartWorker(1, "pi-b", "--listen 0.0.0.0:7000");
  const std::string log = dir_ + "/pi-b.log";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string said = ReadFile(log);
  EXPECT_NE(said.find("not announcing pi-b on the network (DNS-SD): "
                      "avahi-daemon is not running"),
            std::string::npos)
      << said;
  // ... and announces itself once the daemon is up.
  StartAvahi(1);
  EXPECT_TRUE(WaitForLog(log, "announcing pi-b on the network as", 15))
      << ReadFile(log);
  const std::string after = ReadFile(log);
  EXPECT_EQ(after.find("not announcing"), after.rfind("not announcing"))
      << "one line, not one per retry:\n"
      << after;
  EXPECT_EQ(Shell(On(1) + ShoalBinary() + " cluster scan --timeout 2", &out), 0)
      << out;
  // Listed, and usable: it served all along.
  EXPECT_NE(out.find("pi-b  " + Ip(1) + ":7000"), std::string::npos) << out;
  EXPECT_NE(out.find("1 worker found, 1 usable"), std::string::npos) << out;
}

TEST_F(Discovery, TlsWorkersAreCheckedWithACoordinatorCertificate) {
  StartAvahi(0);
  StartAvahi(1);
  const std::string certs = dir_ + "/certs";
  std::string out;
  for (const std::string& cmd :
       {"certs init " + certs, "certs issue pi-a --dir " + certs,
        "certs issue laptop --dir " + certs + " --role coordinator"}) {
    ASSERT_EQ(Shell(ShoalBinary() + " " + cmd, &out), 0) << cmd << ": " << out;
  }
  StartWorker(0, "pi-a",
              "--listen 0.0.0.0:7000 --tls-ca " + certs +
                  "/ca.crt --tls-cert " + certs + "/pi-a.crt --tls-key " +
                  certs + "/pi-a.key");
  StartWorker(1, "pi-plain", "--listen 0.0.0.0:7000");
  for (const char* w : {"pi-a", "pi-plain"}) {
    EXPECT_TRUE(
        WaitForLog(dir_ + "/" + w + ".log",
                   "announcing " + std::string(w) + " on the network as", 10))
        << ReadFile(dir_ + "/" + w + ".log");
  }

  // The record as announced, in its order, through the interface itself
  // (this process browses through host 1's bus; the daemon is in host 1).
  setenv("DBUS_SYSTEM_BUS_ADDRESS", ("unix:path=" + Bus(1)).c_str(), 1);
  auto found = BrowseDnsSd(kShoalServiceType, 2);
  unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_EQ(found->size(), 2u);
  const DnsSdFound& a = (*found)[0];
  EXPECT_EQ(a.instance, "pi-a");
  EXPECT_EQ(a.address, Ip(0));
  EXPECT_EQ(a.port, 7000);
  EXPECT_EQ(a.host, "shoal-dsd-host0.local");
  ASSERT_FALSE(a.txt.empty());
  EXPECT_EQ(a.txt.front(), "txtvers=1");
  EXPECT_EQ(a.txt.back(), "tls=on");

  // Without the coordinator's certificate: listed, not usable.
  EXPECT_EQ(Shell(On(1) + ShoalBinary() + " cluster scan --timeout 2", &out), 0)
      << out;
  EXPECT_NE(out.find("not usable: takes mutual TLS only: scan with --tls-ca"),
            std::string::npos)
      << out;
  // With it: checked over TLS, written with the tls block; the plaintext
  // worker is left out, as one cluster dials all its workers one way.
  const std::string file = dir_ + "/tls.yaml";
  const std::string tls = " --tls-ca " + certs + "/ca.crt --tls-cert " + certs +
                          "/laptop.crt --tls-key " + certs + "/laptop.key";
  EXPECT_EQ(Shell(On(1) + ShoalBinary() + " cluster scan --timeout 2 -o " +
                      file + tls,
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("2 workers found, 1 usable"), std::string::npos) << out;
  EXPECT_NE(out.find("not usable: plaintext, but this scan uses TLS"),
            std::string::npos)
      << out;
  auto c = LoadCluster(file);
  ASSERT_TRUE(c.ok()) << c.status().message() << "\n" << ReadFile(file);
  ASSERT_EQ(c->devices.size(), 1u);
  EXPECT_EQ(c->devices[0].name, "pi-a");
  EXPECT_EQ(c->tls.cert, certs + "/laptop.crt");
  const std::string plan = dir_ + "/lenet-pipe.json";
  EXPECT_EQ(Shell(ShoalBinary() + " plan lenet5 --cluster " + file +
                      " --strategy pipeline -o " + plan,
                  &out),
            0)
      << out;
  EXPECT_EQ(Shell(On(1) + ShoalBinary() + " run --plan " + plan +
                      " --cluster " + file + " --check --timeout-ms 20000",
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
