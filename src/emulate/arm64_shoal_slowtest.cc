// The whole of shoal cross-compiled for arm64 (the test Arm64ShoalBuild,
// scripts/build-shoal-arm64.sh) run under qemu-user as a Cortex-A72 (a
// Raspberry Pi 4), as the board a camera is attached to runs it: it plans
// (GLPK's ILP included), runs a plan in-process, coordinates amd64 workers
// and serves, each giving the amd64 build's output within 1e-4; training,
// which needs the libtorch module this build leaves out, says so; and its
// .deb names a package for every library the binary needs. ctest runs it as
// Arm64Shoal after that build (`make test-arm64`; not part of `make test`,
// docs/testing.md); it skips, naming what is missing, where the cross tools
// or the build are not there.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "graph/tensor_diff.h"
#include "io/npy.h"
#include "runtime/process_test_util.h"

#ifndef SHOAL_ARM64_SHOAL
#define SHOAL_ARM64_SHOAL ""
#endif

namespace shoal {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::Shell;
using testing::ShoalBinary;

std::string Env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v ? v : fallback;
}

// ELF's e_machine of `path` (183: AArch64); -1 if unreadable.
int ElfMachine(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char h[20] = {};
  if (!f.read(reinterpret_cast<char*>(h), sizeof(h))) return -1;
  if (h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') return -1;
  return h[18] | (h[19] << 8);
}

// The first number `re` captures in the file `log`, waiting up to
// `timeout_s` for it to appear; 0 if it does not, or `pid` exits first.
int WaitForNumber(const std::string& log, const std::regex& re, pid_t pid,
                  int timeout_s) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string text = ReadFile(log);
    if (std::regex_search(text, m, re)) return std::stoi(m[1]);
    if (waitpid(pid, nullptr, WNOHANG) == pid) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

// The last JSON object the command printed (`--json` prints it last).
nlohmann::json LastJson(const std::string& out) {
  const auto at = out.find("\n{");
  return nlohmann::json::parse(
      out.substr(at == std::string::npos ? out.find('{') : at + 1), nullptr,
      /*allow_exceptions=*/false);
}

class Arm64Shoal : public ::testing::Test {
 protected:
  void SetUp() override {
    shoal_ = Env("SHOAL_ARM64_SHOAL", SHOAL_ARM64_SHOAL);
    sysroot_ = Env("SHOAL_ARM64_SYSROOT", "/opt/shoal/sysroot-arm64");
    std::string out, missing;
    if (Shell("command -v qemu-aarch64", &out) != 0) {
      missing += " qemu-aarch64 (Debian package qemu-user);";
    }
    if (!fs::exists(sysroot_ + "/.shoal-sysroot-packages")) {
      missing += " the arm64 sysroot " + sysroot_ + ";";
    }
    if (shoal_.empty() || !fs::exists(shoal_)) {
      missing +=
          " the arm64 shoal " +
          (shoal_.empty() ? std::string("(SHOAL_ARM64_SHOAL)") : shoal_) +
          " (the test Arm64ShoalBuild builds it);";
    }
    if (!missing.empty()) {
      GTEST_SKIP() << "needs" << missing
                   << " scripts/install-deps.sh --arm64 installs the tools, "
                      "and `make test-arm64` builds shoal for arm64 and runs "
                      "this test";
    }
    ASSERT_EQ(ElfMachine(shoal_), 183) << shoal_ << " is not an AArch64 ELF";
    dir_ = fs::temp_directory_path() /
           ("shoal-arm64-shoal-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  void TearDown() override {
    for (pid_t p : pids_) {
      kill(p, SIGTERM);
      for (int i = 0; i < 100 && waitpid(p, nullptr, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // The arm64 shoal under qemu as a Cortex-A72 (no SVE: the kernels a Pi 4
  // gets), bounded so that a hang fails the test instead of stalling it.
  std::string Arm(const std::string& args) const {
    return "timeout 300 /usr/bin/qemu-aarch64 -L " + sysroot_ +
           " -cpu cortex-a72 " + shoal_ + " " + args;
  }
  std::string Amd(const std::string& args) const {
    return ShoalBinary() + " " + args;
  }

  // The largest relative difference between two .npy files.
  double NpyRelDiff(const std::string& got, const std::string& want) {
    auto a = ReadNpy(got);
    auto b = ReadNpy(want);
    EXPECT_TRUE(a.ok()) << got;
    EXPECT_TRUE(b.ok()) << want;
    if (!a.ok() || !b.ok()) return 1;
    return DiffTensors(*a, *b).max_rel;
  }

  // Two amd64 workers on 127.0.0.1 and a cluster file naming them.
  void StartAmd64Workers() {
    cluster_ = dir_ + "/cluster.yaml";
    std::ofstream cluster(cluster_);
    cluster << "devices:\n";
    for (const char* name : {"cam", "shelf"}) {
      const std::string log = dir_ + "/" + name + ".log";
      const pid_t pid = testing::SpawnLogged(
          {ShoalBinary(), "worker", "--listen", "127.0.0.1:0", "--name", name,
           "--threads", "1", "--cache-dir", dir_ + "/" + name + ".weights"},
          log);
      pids_.push_back(pid);
      const int port =
          WaitForNumber(log, std::regex("listening on port (\\d+)"), pid, 30);
      ASSERT_GT(port, 0) << ReadFile(log);
      cluster << "  - {name: " << name << ", address: 127.0.0.1:" << port
              << ", cores: 1}\n";
    }
  }

  std::string shoal_, sysroot_, dir_, cluster_;
  std::vector<pid_t> pids_;
};

// `plan` on the board, for an example cluster of four Pi 4s, and the plan
// run in-process (`run --local`) on the board and on amd64 from the same
// input: each passes its own check against one device, and the two outputs
// agree. fuse-ilp solves its ILP with arm64's GLPK; mobilenet-v2's input
// is an image (8-bit on the wire).
TEST_F(Arm64Shoal, PlansAndRunsLikeTheAmd64Build) {
  std::string out;
  ASSERT_EQ(Shell(Arm("--version"), &out), 0) << out;
  EXPECT_NE(out.find("shoal 0.1.0"), std::string::npos) << out;
  const std::string cluster =
      std::string(SHOAL_SOURCE_DIR) + "/examples/pi4-4.yaml";
  const std::pair<std::string, std::string> cases[] = {
      {"lenet5", "fuse-ilp"}, {"mobilenet-v2", "spatial"}};
  for (const auto& [model, strategy] : cases) {
    const std::string p = dir_ + "/" + model + "-" + strategy;
    ASSERT_EQ(Shell(Arm("plan " + model + " --cluster " + cluster +
                        " --strategy " + strategy + " -o " + p + ".json"),
                    &out),
              0)
        << out;
    for (const bool arm : {true, false}) {
      const std::string run = "run --plan " + p +
                              ".json --local --input-seed 1 --check --json "
                              "--output " +
                              p + (arm ? ".arm.npy" : ".amd.npy");
      ASSERT_EQ(Shell(arm ? Arm(run) : Amd(run), &out), 0) << out;
      const auto j = LastJson(out);
      ASSERT_TRUE(j.is_object()) << out;
      EXPECT_TRUE(j.value("check_passed", false)) << model << ": " << out;
      EXPECT_LE(j.value("max_rel_diff", 1.0), 1e-4) << model << ": " << out;
    }
    const double diff = NpyRelDiff(p + ".arm.npy", p + ".amd.npy");
    EXPECT_LE(diff, 1e-4) << model << " " << strategy;
    std::cout << model << " " << strategy << " (planned on arm64): run on "
              << "arm64 and on amd64, outputs differ by " << diff
              << " (relative)\n";
  }
}

// A quantized model on the board: `shoal quantize` (amd64) writes a QDQ
// LeNet-5, and the arm64 shoal under qemu as a Cortex-A72 runs it on its
// default backend, XNNPACK's NEON int8 kernels: `infer --profile --json`
// names each layer's path (the convs and fc1 on qc8, fc2, the output, on
// f32 sums), no layer on oneDNN (so none on its gemm:ref), and only the
// input's QuantizeLinear on the reference kernels; the logits are within
// 3 % of the largest of the amd64 reference kernels' with top-1 equal
// (XnnpackInt8.QuantizedLeNet5's bounds).
TEST_F(Arm64Shoal, RunsAQuantizedModelOnXnnpackInt8) {
  Tensor samples({4, 1, 28, 28});
  for (size_t i = 0; i < samples.data.size(); ++i)
    samples.data[i] = static_cast<float>(i % 79) / 78.f;
  const std::string cal = dir_ + "/cal.npy", q = dir_ + "/lenet5.int8.onnx";
  ASSERT_TRUE(WriteNpy(cal, samples).ok());
  std::string out;
  ASSERT_EQ(
      Shell(Amd("quantize lenet5 --calibration " + cal + " -o " + q), &out), 0)
      << out;
  ASSERT_EQ(Shell(Arm("infer " + q + " --input-seed 1 --profile --json " +
                      "--output " + dir_ + "/arm.npy"),
                  &out),
            0)
      << out;
  const auto j = LastJson(out);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j.value("backend", ""), "xnnpack") << out;
  EXPECT_EQ(j.value("dtype", ""), "int8") << out;
  ASSERT_TRUE(j.contains("int8")) << out;
  EXPECT_EQ(j["int8"].value("layers", 0), 5) << out;
  EXPECT_EQ(j["int8"].value("qc8", 0), 4) << out;
  EXPECT_EQ(j["int8"].value("f32_sums", 0), 1) << out;
  EXPECT_EQ(j["int8"].value("path", ""), "xnnpack qc8 + f32 sums") << out;
  std::map<std::string, std::string> kernel;
  for (const auto& r : j["profile"]["ops"]) {
    const std::string op = r.value("op", ""), k = r.value("kernel", "");
    kernel[op] = k;
    // oneDNN at most reorders (no MACs): its gemm:ref never runs a layer.
    if (k.rfind("onednn", 0) == 0) {
      EXPECT_EQ(op, "reorder") << out;
    }
    if (k == "reference") {
      EXPECT_EQ(op, "QuantizeLinear") << out;
    }
  }
  EXPECT_EQ(kernel["Conv+Relu"], "xnnpack qc8") << out;
  EXPECT_EQ(kernel["Gemm"], "xnnpack f32-sums") << out;
  ASSERT_EQ(Shell(Amd("infer " + q + " --backend reference --input-seed 1 " +
                      "--output " + dir_ + "/ref.npy"),
                  &out),
            0)
      << out;
  auto arm = ReadNpy(dir_ + "/arm.npy");
  auto ref = ReadNpy(dir_ + "/ref.npy");
  ASSERT_TRUE(arm.ok() && ref.ok());
  ASSERT_EQ(arm->data.size(), ref->data.size());
  float scale = 0, diff = 0;
  for (size_t i = 0; i < ref->data.size(); ++i) {
    scale = std::max(scale, std::fabs(ref->data[i]));
    diff = std::max(diff, std::fabs(arm->data[i] - ref->data[i]));
  }
  EXPECT_LE(diff, 0.03f * scale);
  EXPECT_EQ(
      std::max_element(arm->data.begin(), arm->data.end()) - arm->data.begin(),
      std::max_element(ref->data.begin(), ref->data.end()) - ref->data.begin());
  std::cout << "lenet5 int8 on arm64's XNNPACK: logits within " << diff / scale
            << " of the largest of amd64's reference\n";
}

// The board as the coordinator of a cluster: the arm64 shoal deploys to
// two amd64 workers, runs and checks against one device.
TEST_F(Arm64Shoal, CoordinatesWorkers) {
  StartAmd64Workers();
  if (HasFatalFailure()) return;
  std::string out;
  const std::string plan = dir_ + "/lenet5-lop.json";
  ASSERT_EQ(Shell(Arm("plan lenet5 --cluster " + cluster_ +
                      " --strategy lop -o " + plan),
                  &out),
            0)
      << out;
  ASSERT_EQ(Shell(Arm("run --plan " + plan + " --cluster " + cluster_ +
                      " --check --json --timeout-ms 120000"),
                  &out),
            0)
      << out;
  const auto j = LastJson(out);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_TRUE(j.value("check_passed", false)) << out;
  EXPECT_LE(j.value("max_rel_diff", 1.0), 1e-4) << out;
  ASSERT_TRUE(j.contains("devices")) << out;
  EXPECT_EQ(j["devices"].size(), 2u) << out;
  for (const auto& d : j["devices"]) {
    EXPECT_GT(d.value("compute_ms", 0.0), 0) << d.dump();
  }
}

// `serve` on the board: an amd64 client's request is answered with the
// amd64 one-device output.
TEST_F(Arm64Shoal, Serves) {
  StartAmd64Workers();
  if (HasFatalFailure()) return;
  const std::string log = dir_ + "/serve.log";
  const pid_t pid = testing::SpawnLogged(
      {"/usr/bin/qemu-aarch64", "-L", sysroot_, "-cpu", "cortex-a72", shoal_,
       "serve", "--cluster", cluster_, "--model", "lenet5", "--strategy", "lop",
       "--listen", "127.0.0.1:0"},
      log);
  pids_.push_back(pid);
  // Under emulation planning and deploying take ~10x as long as natively.
  const int port = WaitForNumber(
      log, std::regex("listening on \\S+ \\(port (\\d+)\\)"), pid, 180);
  ASSERT_GT(port, 0) << ReadFile(log);
  std::string out;
  ASSERT_EQ(
      Shell(Amd("infer-remote --server 127.0.0.1:" + std::to_string(port) +
                " --input-seed 3 --output " + dir_ + "/served.npy"),
            &out),
      0)
      << out << "\nserve: " << ReadFile(log);
  ASSERT_EQ(
      Shell(Amd("infer lenet5 --input-seed 3 --output " + dir_ + "/ref.npy"),
            &out),
      0)
      << out;
  EXPECT_LE(NpyRelDiff(dir_ + "/served.npy", dir_ + "/ref.npy"), 1e-4);
}

// Training needs libtorch, which the arm64 build leaves out: it fails at
// once, saying which commands need it and where to run them.
TEST_F(Arm64Shoal, TrainingSaysItNeedsLibtorch) {
  std::string out;
  EXPECT_NE(Shell(Arm("lcp train lenet5 --dataset fashion-mnist --limit 10 "
                      "--epochs 1 -o " +
                      dir_ + "/lenet5.onnx"),
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("built without libtorch"), std::string::npos) << out;
  EXPECT_NE(out.find("shoal lcp train"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir_ + "/lenet5.onnx"));
}

// The package (cpack in the arm64 tree): arm64, /usr/bin/shoal and no
// libtorch module, and every library the binary needs owned by a package
// it depends on. The sysroot has no dpkg database, so each library's
// package is the one that owns its amd64 twin here: Debian names a
// library's package the same on both architectures.
TEST_F(Arm64Shoal, PackageDependsOnEveryLibraryItNeeds) {
  const std::string build = fs::path(shoal_).parent_path();
  std::string out;
  ASSERT_EQ(Shell("cd " + build + " && cpack -B " + dir_ + "/deb", &out), 0)
      << out;
  const std::string deb = dir_ + "/deb/shoal_0.1.0_arm64.deb";
  ASSERT_TRUE(fs::exists(deb)) << out;
  ASSERT_EQ(Shell("dpkg-deb -f " + deb + " Architecture", &out), 0) << out;
  EXPECT_EQ(out, "arm64\n");
  ASSERT_EQ(Shell("dpkg-deb -c " + deb, &out), 0) << out;
  EXPECT_NE(out.find("./usr/bin/shoal\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("libshoal_torch"), std::string::npos) << out;
  ASSERT_EQ(Shell("dpkg-deb -f " + deb + " Depends", &out), 0) << out;
  std::set<std::string> depends;
  {
    std::stringstream s(out);
    std::string d;
    while (std::getline(s, d, ',')) {
      d.erase(0, d.find_first_not_of(" \n"));
      d.erase(d.find_last_not_of(" \n") + 1);
      depends.insert(d.substr(0, d.find(' ')));
    }
  }
  EXPECT_EQ(depends.count("libtorch1.13"), 0u) << out;
  ASSERT_EQ(Shell("readelf -d " + shoal_ +
                      " | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p'",
                  &out),
            0)
      << out;
  std::stringstream needed(out);
  std::string lib;
  int n = 0;
  while (std::getline(needed, lib)) {
    ++n;
    // The dynamic loader's name is the one library whose amd64 twin has
    // another name; libc6 holds both.
    const std::string twin =
        lib == "ld-linux-aarch64.so.1" ? "ld-linux-x86-64.so.2" : lib;
    std::string owner;
    ASSERT_EQ(Shell("dpkg -S '/usr/lib/x86_64-linux-gnu/" + twin +
                        "' '/lib/x86_64-linux-gnu/" + twin +
                        "' 2>/dev/null | head -1 | cut -d: -f1",
                    &owner),
              0);
    while (!owner.empty() && owner.back() == '\n') owner.pop_back();
    EXPECT_FALSE(owner.empty()) << lib << ": no package here owns " << twin;
    EXPECT_EQ(depends.count(owner), 1u)
        << "shoal needs " << lib << " (package " << owner
        << "), which the package's Depends does not name";
  }
  EXPECT_GT(n, 10);
}

}  // namespace
}  // namespace shoal
