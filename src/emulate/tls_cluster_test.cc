// `shoal cluster up` with `tls: {dir: ...}` end to end, as docs/security.md
// shows it: the CA and every certificate are issued, the workers start
// with theirs, `shoal run --check` over mutual TLS equals one device, and
// the same workers refuse a cluster file without the tls block, saying why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "runtime/process_test_util.h"
#include "util/net_address.h"

namespace shoal {
namespace {

using testing::ReadFile;
using testing::Shell;
using testing::ShoalBinary;

TEST(TlsCluster, ClusterUpIssuesCertificatesAndRunsOverTls) {
  const std::string dir =
      ::testing::TempDir() + "/tls-cluster-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string devices = "devices:\n";
  for (int i = 0; i < 2; ++i) {
    auto port = FreeLoopbackPort();
    ASSERT_TRUE(port.ok()) << port.status().message();
    devices += "  - {name: d" + std::to_string(i) +
               ", address: 127.0.0.1:" + std::to_string(*port) + "}\n";
  }
  const std::string file = dir + "/cluster.yaml";
  const std::string plain = dir + "/plain.yaml";
  std::ofstream(file) << "tls: {dir: certs}\n" << devices;
  std::ofstream(plain) << devices;
  const std::string shoal = ShoalBinary();
  std::string out;
  ASSERT_EQ(Shell(shoal + " cluster up " + file, &out), 0) << out;
  EXPECT_NE(out.find("made a cluster CA"), std::string::npos) << out;
  for (const char* f :
       {"ca.crt", "ca.key", "coordinator.crt", "d0.key", "d1.crt"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/certs/" + f)) << f;
  }
  const std::string plan = dir + "/plan.json";
  int rc = Shell(
      shoal + " plan lenet5 --cluster " + file + " --strategy lop -o " + plan,
      &out);
  EXPECT_EQ(rc, 0) << out;
  rc = Shell(shoal + " run --plan " + plan + " --cluster " + file + " --check",
             &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  rc = Shell(shoal + " run --plan " + plan + " --cluster " + plain, &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("does not answer"), std::string::npos) << out;
  EXPECT_NE(out.find("TLS"), std::string::npos) << out;
  // A worker given a coordinator's certificate is refused at start.
  rc = Shell(shoal + " worker --listen 127.0.0.1:0 --tls-ca " + dir +
                 "/certs/ca.crt --tls-cert " + dir +
                 "/certs/coordinator.crt --tls-key " + dir +
                 "/certs/coordinator.key",
             &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("device certificate"), std::string::npos) << out;
  EXPECT_EQ(Shell(shoal + " cluster down --purge " + file, &out), 0) << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shoal
