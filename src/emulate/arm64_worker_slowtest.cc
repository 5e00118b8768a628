// The arm64 worker (cross-compiled by the test Arm64WorkerBuild,
// scripts/build-worker-arm64.sh) run under qemu-user as one device of a
// cluster on 127.0.0.1, next to an amd64 worker: plans that split every
// layer or the layers between the two give the output of the amd64
// one-device run (`shoal run --check`). ctest runs it as the test
// Arm64Worker after that build (`make test-arm64` runs the two alone); it
// skips, naming what is missing, where the cross tools are not installed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>
#include <utility>

#include "runtime/process_test_util.h"

#ifndef SHOAL_ARM64_WORKER
#define SHOAL_ARM64_WORKER ""
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

// ELF's e_machine of `path` (183: AArch64, 62: x86-64); -1 if unreadable.
int ElfMachine(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char h[20] = {};
  if (!f.read(reinterpret_cast<char*>(h), sizeof(h))) return -1;
  if (h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') return -1;
  return h[18] | (h[19] << 8);
}

// A worker process and the port it bound ("listening on port N").
struct Spawned {
  pid_t pid = -1;
  int port = 0;
  std::string log;
};

Spawned SpawnWorker(const std::vector<std::string>& args,
                    const std::string& log, int timeout_s) {
  Spawned w;
  w.log = log;
  w.pid = testing::SpawnLogged(args, log);
  const std::regex re("listening on port ([0-9]+)");
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string text = ReadFile(log);
    if (std::regex_search(text, m, re)) {
      w.port = std::stoi(m[1]);
      return w;
    }
    if (waitpid(w.pid, nullptr, WNOHANG) == w.pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return w;
}

void Stop(Spawned* w) {
  if (w->pid <= 0) return;
  kill(w->pid, SIGTERM);
  for (int i = 0; i < 100 && waitpid(w->pid, nullptr, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(w->pid, SIGKILL);
  waitpid(w->pid, nullptr, 0);
  w->pid = -1;
}

class Arm64Worker : public ::testing::Test {
 protected:
  void SetUp() override {
    worker_ = Env("SHOAL_ARM64_WORKER", SHOAL_ARM64_WORKER);
    sysroot_ = Env("SHOAL_ARM64_SYSROOT", "/opt/shoal/sysroot-arm64");
    std::string out;
    std::string missing;
    if (Shell("command -v qemu-aarch64", &out) != 0) {
      missing += " qemu-aarch64 (Debian package qemu-user);";
    }
    if (!fs::exists(sysroot_ + "/.shoal-sysroot-packages")) {
      missing += " the arm64 sysroot " + sysroot_ +
                 " (scripts/install-deps.sh --worker-arm64);";
    }
    if (worker_.empty() || !fs::exists(worker_)) {
      missing +=
          " the arm64 shoal-worker " +
          (worker_.empty() ? std::string("(SHOAL_ARM64_WORKER)") : worker_) +
          " (the test Arm64WorkerBuild builds it);";
    }
    if (!missing.empty()) {
      GTEST_SKIP() << "needs" << missing
                   << " scripts/install-deps.sh --worker-arm64 installs the "
                      "tools, and `make test-arm64` builds the worker and "
                      "runs this test";
    }
    ASSERT_EQ(ElfMachine(worker_), 183) << worker_ << " is not an AArch64 ELF";
    dir_ = fs::temp_directory_path() /
           ("shoal-arm64-slowtest-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }

  void TearDown() override {
    Stop(&arm_);
    Stop(&x86_);
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // A Cortex-A72 (Raspberry Pi 4): no SVE, so oneDNN takes the paths it
  // takes on the board, not the SVE kernels of qemu's default CPU.
  std::vector<std::string> Qemu() const {
    return {
        "/usr/bin/qemu-aarch64", "-L", sysroot_, "-cpu", "cortex-a72", worker_};
  }

  void StartBoth() {
    std::vector<std::string> arm = Qemu();
    for (const char* a : {"--listen", "127.0.0.1:0", "--name", "pi",
                          "--threads", "2", "--cache-dir"}) {
      arm.push_back(a);
    }
    arm.push_back(dir_ + "/pi.weights");
    // Under emulation everything is ~10x slower, its start included.
    arm_ = SpawnWorker(arm, dir_ + "/pi.log", 120);
    ASSERT_GT(arm_.port, 0) << ReadFile(arm_.log);
    x86_ = SpawnWorker(
        {ShoalBinary(), "worker", "--listen", "127.0.0.1:0", "--name", "laptop",
         "--threads", "1", "--cache-dir", dir_ + "/laptop.weights"},
        dir_ + "/laptop.log", 20);
    ASSERT_GT(x86_.port, 0) << ReadFile(x86_.log);
    cluster_ = dir_ + "/cluster.yaml";
    std::ofstream(cluster_)
        << "devices:\n"
        << "  - {name: pi, address: 127.0.0.1:" << arm_.port << ", cores: 2}\n"
        << "  - {name: laptop, address: 127.0.0.1:" << x86_.port
        << ", cores: 1}\n";
  }

  std::string worker_, sysroot_, dir_, cluster_;
  Spawned arm_, x86_;
};

TEST_F(Arm64Worker, RunsUnderQemuAndStartsAsOnTheBoard) {
  std::string out;
  std::vector<std::string> q = Qemu();
  std::string cmd;
  for (const auto& a : q) cmd += a + " ";
  ASSERT_EQ(Shell(cmd + "--version", &out), 0) << out;
  EXPECT_NE(out.find("shoal 0.1.0"), std::string::npos) << out;
  // A bad flag is refused by the arm64 build as by the amd64 one.
  EXPECT_NE(Shell(cmd + "--threads -3 --listen 127.0.0.1:0", &out), 0);
  EXPECT_NE(out.find("--threads must be >= 0"), std::string::npos) << out;
}

TEST_F(Arm64Worker, PlansAcrossArm64AndAmd64MatchOneDevice) {
  StartBoth();
  if (HasFatalFailure()) return;
  // Every layer split in two (lop, spatial), layers apart (pipeline), and
  // activations as float16 and LZ4 between the two architectures.
  const std::pair<std::string, std::string> plans[] = {
      {"lop", ""},
      {"spatial", ""},
      {"pipeline", ""},
      {"lop", "--wire-dtype f16 --wire-compression lz4"}};
  int n = 0;
  for (const auto& [s, extra] : plans) {
    const std::string plan =
        dir_ + "/lenet5-" + s + std::to_string(n++) + ".json";
    std::string out;
    ASSERT_EQ(Shell(ShoalBinary() + " plan lenet5 --cluster " + cluster_ +
                        " --strategy " + s + " " + extra + " -o " + plan,
                    &out),
              0)
        << out;
    ASSERT_EQ(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                        cluster_ + " --check --json --timeout-ms 120000",
                    &out),
              0)
        << s << ": " << out << "\npi: " << ReadFile(arm_.log);
    // --json's object is the last thing printed.
    const auto j = nlohmann::json::parse(out.substr(out.find('{')), nullptr,
                                         /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << out;
    EXPECT_TRUE(j.value("check_passed", false)) << s << ": " << out;
    EXPECT_LE(j.value("max_rel_diff", 1.0), extra.empty() ? 1e-4 : 1e-2) << s;
    // Both devices computed and held weights: the arm64 one did its part.
    for (const auto& d : j["devices"]) {
      EXPECT_GT(d.value("compute_ms", 0.0), 0) << s << ": " << d.dump();
      EXPECT_GT(d.value("weight_bytes", int64_t{0}), 0)
          << s << ": " << d.dump();
    }
    std::cout << s << " " << extra << ": max rel diff "
              << j.value("max_rel_diff", -1.0)
              << " against the amd64 one-device run\n";
  }
}

// The kernel check: under qemu as a Cortex-A53 (Pi 3), A72 (Pi 4) and A76
// (Pi 5), the arm64 worker's engine, on its default backend, puts at least
// 95 % of each zoo model's MACs in XNNPACK's kernels and none in oneDNN's
// reference implementations. `shoal-worker kernels` builds the model's
// executor and lists each node's kernel without running it (kernels are
// chosen at build: running VGG16 under emulation would take minutes); the
// MACs per node come from this side's `shoal analyze`, so the arm64 build
// only says which kernel took each node. ctest runs it as Arm64Kernels.
class Arm64Kernels : public Arm64Worker {
 protected:
  // Node name -> MACs, from the amd64 build.
  std::map<std::string, int64_t> NodeMacs(const std::string& model) {
    std::string out;
    const std::string file = dir_ + "/" + model + ".analyze.json";
    EXPECT_EQ(
        Shell(ShoalBinary() + " analyze " + model + " --json > " + file, &out),
        0)
        << out;
    const auto j = nlohmann::json::parse(ReadFile(file), nullptr, false);
    std::map<std::string, int64_t> macs;
    if (!j.is_object()) return macs;
    for (const auto& l : j["layers"])
      macs[l.value("name", "")] = l.value("macs", int64_t{0});
    return macs;
  }

  // `shoal-worker kernels MODEL --json` on the emulated `cpu`.
  nlohmann::json Kernels(const std::string& cpu, const std::string& model,
                         const std::string& extra = "", int timeout_s = 300) {
    std::string cmd = "timeout " + std::to_string(timeout_s) +
                      " /usr/bin/qemu-aarch64 -L " + sysroot_ + " -cpu " + cpu +
                      " " + worker_ + " kernels " + model +
                      " --threads 1 --json " + extra;
    const std::string file = dir_ + "/" + model + "." + cpu + ".json";
    std::string out;
    EXPECT_EQ(Shell(cmd + " > " + file, &out), 0) << cmd << ": " << out;
    return nlohmann::json::parse(ReadFile(file), nullptr, false);
  }
};

TEST_F(Arm64Kernels, ZooMacsRunOnXnnpackOnEachBoardCore) {
  // C3D's convolutions are 3-D, which this XNNPACK has not: they run on
  // the reference kernels (docs/engine.md), and the check says so.
  const std::set<std::string> known_gaps = {"c3d"};
  std::string out;
  const std::string zoo_file = dir_ + "/zoo.json";
  ASSERT_EQ(Shell(ShoalBinary() + " zoo --json > " + zoo_file, &out), 0) << out;
  const auto zoo = nlohmann::json::parse(ReadFile(zoo_file), nullptr, false);
  ASSERT_TRUE(zoo.is_array()) << ReadFile(zoo_file);
  ASSERT_GE(zoo.size(), 10u);
  for (const auto& entry : zoo) {
    const std::string model = entry.value("name", "");
    const auto macs = NodeMacs(model);
    int64_t total = 0;
    for (const auto& [node, m] : macs) total += m;
    ASSERT_EQ(total, entry.value("macs", int64_t{-1})) << model;
    for (const char* cpu : {"cortex-a53", "cortex-a72", "cortex-a76"}) {
      const auto j = Kernels(cpu, model);
      ASSERT_TRUE(j.is_object()) << model << " on " << cpu;
      // No --backend: the arm64 build's default is XNNPACK.
      EXPECT_EQ(j.value("backend", ""), "xnnpack") << model;
      EXPECT_EQ(j.value("machine", ""), "aarch64") << model;
      std::map<std::string, int64_t> by_kernel;
      int listed = 0;
      for (const auto& n : j["nodes"]) {
        const std::string node = n.value("node", "");
        auto it = macs.find(node);
        ASSERT_NE(it, macs.end()) << model << ": node " << node;
        ++listed;
        if (it->second == 0) continue;
        const std::string kernel = n.value("kernel", "");
        const std::string impl = n.value("impl", "");
        by_kernel[kernel.empty() ? "none" : kernel] += it->second;
        EXPECT_FALSE(kernel == "onednn" &&
                     impl.find("ref") != std::string::npos)
            << model << " on " << cpu << ": " << node << " on oneDNN's "
            << impl;
        EXPECT_FALSE(kernel.empty())
            << model << ": " << node << " has MACs but no step";
        if (known_gaps.count(model) && kernel != "xnnpack") {
          EXPECT_EQ(n.value("op", ""), "Conv") << model << ": " << node;
        }
      }
      EXPECT_EQ(listed, static_cast<int>(macs.size())) << model;
      const double share =
          total > 0 ? static_cast<double>(by_kernel["xnnpack"]) / total : 0;
      std::cout << model << " on " << cpu << ": " << 100 * share << " % of "
                << total << " MACs in XNNPACK\n";
      if (!known_gaps.count(model)) {
        EXPECT_GE(share, 0.95) << model << " on " << cpu;
      }
    }
  }
}

// The check can fail: oneDNN, told to, takes a layer of the same worker on
// the same core to its reference loops (why XNNPACK is the default).
TEST_F(Arm64Kernels, OneDnnOnTheBoardCoresIsReference) {
  const auto j = Kernels("cortex-a72", "lenet5", "--backend onednn");
  ASSERT_TRUE(j.is_object());
  bool ref = false;
  for (const auto& n : j["nodes"]) {
    if (n.value("op", "") == "Conv" && n.value("kernel", "") == "onednn")
      ref = ref || n.value("impl", "").find("ref") != std::string::npos;
  }
  EXPECT_TRUE(ref) << j.dump(1);
}

// The quantized (QDQ) path on the board's cores. A zoo model quantized on
// the arm64 worker as XnnpackInt8's tests quantize it (`kernels --dtype
// int8`: calibrated on 16 seeded inputs uniform in [0, 1]) runs under qemu
// as a Cortex-A72 on XNNPACK's NEON int8 kernels and on the reference
// kernels (`--check N`), held to the native tests' bounds: each quantized
// layer alone, on the reference's int8 input, within one quantization step
// and under 1 % of its values off where it is qc8, exact to float rounding
// (1e-5 of its largest output) where it sums on f32; the model's output
// within `tol` of the largest with top-1 equal; every MAC in XNNPACK's
// qc8 or f32-sums layers (so none in oneDNN's gemm:ref). ctest runs these
// as Arm64KernelsInt8.
void ExpectInt8MatchesReference(const nlohmann::json& j, int samples,
                                double tol, double min_qc8, double min_sums) {
  ASSERT_TRUE(j.is_object());
  const std::string model = j.value("model", "");
  EXPECT_EQ(j.value("backend", ""), "xnnpack");
  EXPECT_EQ(j.value("machine", ""), "aarch64");
  EXPECT_EQ(j.value("dtype", ""), "int8");
  std::map<std::string, std::string> impl;
  int64_t qc8 = 0, sums = 0;
  for (const auto& n : j["nodes"]) {
    const int64_t macs = n.value("macs", int64_t{0});
    if (macs == 0) continue;
    const std::string node = n.value("node", ""), path = n.value("impl", "");
    EXPECT_EQ(n.value("kernel", ""), "xnnpack") << node << ": " << path;
    EXPECT_TRUE(path == "qc8" || path == "f32-sums") << node << ": " << path;
    impl[node] = path;
    (path == "qc8" ? qc8 : sums) += macs;
  }
  const int64_t total = j.value("macs", int64_t{0});
  ASSERT_GT(total, 0);
  EXPECT_EQ(qc8 + sums, total) << j.dump(1);
  EXPECT_GT(static_cast<double>(qc8) / total, min_qc8) << model;
  EXPECT_GT(static_cast<double>(sums) / total, min_sums) << model;
  const auto& c = j["check"];
  ASSERT_TRUE(c.is_object()) << j.dump(1);
  EXPECT_EQ(c.value("samples", 0), samples);
  EXPECT_EQ(c.value("top1_equal", 0), samples) << c.dump(1);
  EXPECT_LE(c.value("max_diff", 1.0), tol) << c.dump(1);
  EXPECT_EQ(c["layers"].size(), impl.size()) << c.dump(1);
  for (const auto& l : c["layers"]) {
    const std::string node = l.value("node", ""), path = l.value("impl", "");
    EXPECT_EQ(path, impl[node]) << node << " alone took another path";
    EXPECT_GT(l.value("values", int64_t{0}), 0) << node;
    if (path == "qc8") {
      EXPECT_LE(l.value("max_diff", 9.0), 1.0) << node;
      EXPECT_LT(l.value("off_fraction", 1.0), 0.01) << node;
    } else {
      EXPECT_LE(l.value("max_diff", 1.0), 1e-5) << node;
    }
  }
  std::cout << model << " int8 on cortex-a72: " << 100.0 * qc8 / total
            << " % of MACs qc8, " << 100.0 * sums / total
            << " % f32 sums; output within " << c.value("max_diff", -1.0)
            << " of the largest, top-1 equal on " << c.value("top1_equal", 0)
            << " of " << samples << "; " << c["layers"].size()
            << " layers alone within bounds\n";
}

// conv1-3 and fc1 on qc8, fc2 (the output) on f32 sums; the native
// bounds of XnnpackInt8.QuantizedLeNet5 (3 %). About 1 s of CPU.
TEST_F(Arm64Kernels, QuantizedLeNet5OnNeonMatchesTheReference) {
  const auto j = Kernels("cortex-a72", "lenet5", "--dtype int8 --check 4");
  ExpectInt8MatchesReference(j, 4, 0.03, 0.95, 0);
  if (j.is_object()) {
    EXPECT_EQ(j["check"]["layers"].size(), 5u);
  }
}

// At 64x64: each block's first conv on qc8, the rest on f32 sums (an Add
// reads them); XnnpackInt8.QuantizedResNet18's bounds (5 %). About 35 s
// of CPU, most of it the reference kernels under emulation.
TEST_F(Arm64Kernels, QuantizedResNet18OnNeonMatchesTheReference) {
  const auto j = Kernels("cortex-a72", "resnet18",
                         "--input-shape 1,3,64,64 --dtype int8 --check 2",
                         // 35 s of CPU; 3.5 to 4.3 minutes measured on a host
                         // shared with two cross builds.
                         600);
  ExpectInt8MatchesReference(j, 2, 0.05, 0.3, 0.3);
}

}  // namespace
}  // namespace shoal
