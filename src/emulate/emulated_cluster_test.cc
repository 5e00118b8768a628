// `cluster down` signals only the workers `cluster up` started: a pidfile
// whose number the kernel has given to another process is left alone.
#include "emulate/emulated_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/process_test_util.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

TEST(EmulatedCluster, DownLeavesAProcessThatIsNotItsWorkerAlone) {
  const std::string dir = ::testing::TempDir() + "/shoal-down-test";
  fs::create_directories(dir);
  const std::string file = dir + "/one.yaml";
  std::ofstream(file)
      << "devices:\n  - name: d0\n    address: 127.0.0.1:7999\n";
  // A process that is not a shoal worker, under the pidfile's number.
  const pid_t other = fork();
  ASSERT_GE(other, 0);
  if (other == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  const std::string state = ClusterStateDir(file);
  fs::create_directories(state);
  std::ofstream(state + "/d0.pid") << other << "\n";
  usleep(100 * 1000);  // let it exec
  std::ostringstream out;
  Status s = ClusterDown(file, out, /*purge=*/true);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(kill(other, 0), 0) << "cluster down signalled pid " << other;
  EXPECT_NE(out.str().find("is no longer its worker"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("sleep 30"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("0 workers stopped"), std::string::npos)
      << out.str();
  kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
  fs::remove_all(dir);
}

// A worker whose pid `cluster up` cannot record (a full disk) is one that
// `cluster down` cannot find: it would keep its port, and the next `up` of
// the cluster would fail on it. `up` says so and stops the worker itself.
TEST(EmulatedCluster, UpStopsAWorkerWhosePidItCannotRecord) {
  const std::string dir =
      ::testing::TempDir() + "/shoal-up-pidfile-" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = dir + "/one.yaml";
  auto port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok()) << port.status().message();
  std::ofstream(file) << "devices:\n  - name: d0\n    address: 127.0.0.1:"
                      << *port << "\n";
  const std::string state = ClusterStateDir(file);
  fs::remove_all(state);
  // A directory where the pid file goes: opening it for writing fails, as
  // writing to a full disk does.
  fs::create_directories(state + "/d0.pid");
  std::string out;
  EXPECT_NE(
      testing::Shell(testing::ShoalBinary() + " cluster up " + file, &out), 0)
      << out;
  EXPECT_NE(out.find("cannot write " + state + "/d0.pid"), std::string::npos)
      << out;
  EXPECT_NE(out.find("stopped device d0's worker"), std::string::npos) << out;
  // Nothing listens on the device's port any more.
  EXPECT_NE(testing::Shell("bash -c 'exec 3<> /dev/tcp/127.0.0.1/" +
                               std::to_string(*port) + "'",
                           &out),
            0)
      << "a worker still listens on port " << *port;
  fs::remove_all(state);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shoal
