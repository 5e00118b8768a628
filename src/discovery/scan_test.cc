// The checks `cluster scan` makes of what a browse found, on workers in
// this process and on ports where no worker answers: no avahi-daemon
// needed (src/cli/discovery_slowtest.cc browses for real).
#include "discovery/scan.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "runtime/runtime_test_util.h"
#include "runtime/wire.h"
#include "util/net_address.h"
#include "util/version.h"

namespace shoal {
namespace {

DnsSdFound Found(const std::string& name, int port,
                 std::vector<std::string> extra = {}) {
  WorkerAdvert a;
  a.name = name;
  a.cores = 2;
  a.memory_bytes = int64_t{256} << 20;
  a.version = kShoalVersion;
  a.protocol = kProtocolVersion;
  DnsSdFound f;
  f.instance = name;
  f.host = "box.local";
  f.address = "127.0.0.1";
  f.port = port;
  f.txt = extra;  // first occurrence of a key wins: extras override
  for (const auto& e : EncodeWorkerTxt(a)) f.txt.push_back(e);
  return f;
}

const ScannedWorker& Named(const std::vector<ScannedWorker>& ws,
                           const std::string& instance) {
  for (const auto& w : ws) {
    if (w.instance == instance) return w;
  }
  static const ScannedWorker none;
  ADD_FAILURE() << "no " << instance;
  return none;
}

TEST(CheckFoundWorkers, AnsweringWorkersGoIntoTheClusterFile) {
  testing::LocalWorkers lw(2, int64_t{256} << 20);
  std::vector<DnsSdFound> found;
  for (int i = 0; i < 2; ++i) {
    auto hp = SplitHostPort(lw.cluster.devices[i].address, "test");
    ASSERT_TRUE(hp.ok());
    found.push_back(Found(lw.cluster.devices[i].name, hp->port));
  }
  auto ws = CheckFoundWorkers(found, ScanOptions{});
  ASSERT_EQ(ws.size(), 2u);
  for (const auto& w : ws) EXPECT_TRUE(w.usable) << w.note;
  Cluster c = ClusterOfScan(ws);
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].name, "dev0");
  EXPECT_EQ(c.devices[0].address, lw.cluster.devices[0].address);
  EXPECT_EQ(c.devices[0].memory_bytes, int64_t{256} << 20);
  // The worker's own answer: the test's workers compute with one thread.
  EXPECT_EQ(c.devices[0].cores, 1);
  const std::string table = FormatScanTable(ws);
  EXPECT_NE(table.find("dev1"), std::string::npos) << table;
  EXPECT_NE(table.find("256MiB"), std::string::npos) << table;
  EXPECT_EQ(table.find("not usable"), std::string::npos) << table;
}

TEST(CheckFoundWorkers, EachUnusableWorkerGetsANoteWithinTheDeadline) {
  testing::LocalWorkers lw(1);
  auto hp = SplitHostPort(lw.cluster.devices[0].address, "test");
  ASSERT_TRUE(hp.ok());
  auto closed = FreeLoopbackPort();
  ASSERT_TRUE(closed.ok());
  // A port that takes connections and never answers them.
  const int silent = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(listen(silent, 8), 0);
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  const int silent_port = ntohs(sa.sin_port);

  DnsSdFound unresolved;
  unresolved.instance = "ghost";
  unresolved.error = "announced, but did not answer with its address in time";
  std::vector<DnsSdFound> found = {
      Found("dev0", hp->port),
      Found("refuser", *closed),
      Found("silent", silent_port),
      Found("old", *closed, {"protocol=2", "version=0.0.9"}),
      Found("tls", hp->port, {"tls=on"}),
      Found("impostor", hp->port),  // answers as dev0
      Found("garbled", hp->port, {"cores=many"}),
      unresolved};
  ScanOptions o;
  o.answer_s = 1;
  const auto start = std::chrono::steady_clock::now();
  auto ws = CheckFoundWorkers(found, o);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  close(silent);
  EXPECT_LT(took, 10) << "checks run at once, each within its deadline";
  ASSERT_EQ(ws.size(), found.size());
  EXPECT_TRUE(Named(ws, "dev0").usable) << Named(ws, "dev0").note;
  auto note_has = [&](const std::string& instance, const std::string& what) {
    const ScannedWorker& w = Named(ws, instance);
    EXPECT_FALSE(w.usable) << instance;
    EXPECT_NE(w.note.find(what), std::string::npos)
        << instance << ": " << w.note;
  };
  note_has("refuser",
           "refuses connections at 127.0.0.1:" + std::to_string(*closed));
  note_has("silent", "does not answer at 127.0.0.1:" +
                         std::to_string(silent_port) + " within 1 s");
  note_has("old", "speaks shoal protocol 2 (shoal 0.0.9), this shoal speaks " +
                      std::to_string(kProtocolVersion));
  note_has("old", "refuses connections");
  note_has("tls", "--tls-ca");
  note_has("impostor", "answers as 'dev0'");
  note_has("garbled", "cores");
  note_has("ghost", "did not answer with its address");
  Cluster c = ClusterOfScan(ws);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].name, "dev0");
  const std::string table = FormatScanTable(ws);
  EXPECT_NE(table.find("not usable: announced, but refuses connections"),
            std::string::npos)
      << table;
}

TEST(CheckFoundWorkers, TwoWorkersOfOneNameKeepTheFirst) {
  std::vector<std::unique_ptr<Worker>> twins;
  std::vector<DnsSdFound> found;
  for (int i = 0; i < 2; ++i) {
    WorkerOptions o;
    o.name = "twin";
    auto w = Worker::Start(o);
    ASSERT_TRUE(w.ok()) << w.status().message();
    found.push_back(Found("twin", w.value()->port()));
    found.back().instance = i == 0 ? "twin" : "twin #2";  // Avahi's rename
    twins.push_back(std::move(w).value());
  }
  auto ws = CheckFoundWorkers(found, ScanOptions{});
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_TRUE(ws[0].usable) << ws[0].note;
  EXPECT_FALSE(ws[1].usable);
  EXPECT_NE(ws[1].note.find("has the name of the worker at " + ws[0].address),
            std::string::npos)
      << ws[1].note;
  EXPECT_EQ(ClusterOfScan(ws).devices.size(), 1u);
}

}  // namespace
}  // namespace shoal
