#include "emulate/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "graph/cost.h"
#include "graph/random_input.h"
#include "models/builder.h"
#include "models/zoo.h"
#include "runtime/cpu_pacer.h"
#include "sim/latency_model.h"

namespace shoal {

namespace {

// MACs per CPU second of `g` on one kernel thread: the median run of
// `runs` after one warm-up.
StatusOr<double> Rate(const Graph& g, int runs) {
  ASSIGN_OR_RETURN(GraphCost cost, ComputeGraphCost(g));
  ExecutorOptions eo;
  eo.threads = 1;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(g, RandomWeights(g, 7), eo));
  const Tensor x = RandomInput(g.FindTensor(g.inputs[0])->shape, 7);
  std::vector<Tensor> out;
  RETURN_IF_ERROR(ex->Run({x}, &out));
  std::vector<double> secs;
  for (int i = 0; i < runs; ++i) {
    const double c0 = CpuSeconds(true);
    RETURN_IF_ERROR(ex->Run({x}, &out));
    secs.push_back(CpuSeconds(true) - c0);
  }
  // The quickest run: the one least slowed by whatever else the host ran
  // (the other hyperthread of the core, an interrupt).
  std::sort(secs.begin(), secs.end());
  const double s = std::max(secs.front(), 1e-9);
  return static_cast<double>(cost.macs) / s;
}

// Bytes per CPU second of a memcpy from memory to memory, the quickest of
// `runs`. kPi3CopyBytesPerSecond copies 8 MiB, 16 times the A53's L2
// cache; here 64 MiB, more than this host's caches, for the same reason.
double CopyRate(int runs) {
  constexpr size_t kBytes = 64u << 20;
  std::vector<char> a(kBytes, 1), b(kBytes, 2);
  double best = 1e30;
  for (int i = 0; i <= runs; ++i) {
    const double c0 = CpuSeconds(false);
    std::memcpy(b.data(), a.data(), kBytes);
    const double s = CpuSeconds(false) - c0;
    // The first copy faults the destination's pages in: not a copy rate.
    if (i > 0) best = std::min(best, s);
    a[i % kBytes] = b[kBytes - 1 - i];  // keep the copy observable
  }
  return static_cast<double>(kBytes) / std::max(best, 1e-9);
}

}  // namespace

StatusOr<HostRate> CalibrateHost() {
  GraphBuilder conv("calibrate-conv");
  std::string x = conv.Input("input", Shape{1, 64, 56, 56});
  x = conv.Relu(conv.Conv("conv1", x, 64, 3, 1, 1));
  x = conv.Relu(conv.Conv("conv2", x, 64, 3, 1, 1));
  ASSIGN_OR_RETURN(Graph cg, conv.Finish({x}));
  GraphBuilder fc("calibrate-gemm");
  std::string y = fc.Input("input", Shape{1, 4096});
  y = fc.Linear("fc", y, 1024);
  ASSIGN_OR_RETURN(Graph fg, fc.Finish({y}));
  HostRate r;
  r.runs = 15;
  ASSIGN_OR_RETURN(r.conv_macs_per_cpu_second, Rate(cg, r.runs));
  ASSIGN_OR_RETURN(r.gemm_macs_per_cpu_second, Rate(fg, r.runs));
  // Weighted as in VGG16, whose time on a Pi 3 defines speed 1: its fc
  // layers are under 1 % of its MACs.
  r.macs_per_cpu_second = 1.0 / (0.99 / r.conv_macs_per_cpu_second +
                                 0.01 / r.gemm_macs_per_cpu_second);
  r.copy_bytes_per_cpu_second = CopyRate(r.runs);
  return r;
}

namespace {

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) return line;
  }
  return "unknown cpu";
}

}  // namespace

std::string HostRateFile() {
  return "/tmp/shoal-host-calibration-" + std::to_string(getuid());
}

StatusOr<HostRate> CachedHostRate(bool remeasure) {
  const std::string model = CpuModel();
  HostRate r;
  if (!remeasure) {
    std::ifstream f(HostRateFile());
    std::string kept;
    if (std::getline(f, kept) && kept == model &&
        f >> r.macs_per_cpu_second >> r.conv_macs_per_cpu_second >>
            r.gemm_macs_per_cpu_second >> r.copy_bytes_per_cpu_second &&
        r.macs_per_cpu_second > 0 && r.copy_bytes_per_cpu_second > 0) {
      r.cached = true;
      return r;
    }
  }
  ASSIGN_OR_RETURN(r, CalibrateHost());
  std::ofstream(HostRateFile())
      << model << "\n"
      << r.macs_per_cpu_second << " " << r.conv_macs_per_cpu_second << " "
      << r.gemm_macs_per_cpu_second << " " << r.copy_bytes_per_cpu_second
      << "\n";
  return r;
}

double CpuFractionForSpeed(double speed, const HostRate& host) {
  return speed * kPi3MacsPerSecond / host.macs_per_cpu_second;
}

double SystemFractionForSpeed(double speed, int cores, const HostRate& host) {
  const double compute = CpuFractionForSpeed(speed, host);
  if (!(host.copy_bytes_per_cpu_second > 0)) return compute;
  const double copy =
      speed * kPi3CopyBytesPerSecond / host.copy_bytes_per_cpu_second;
  const int n = std::max(1, cores);
  return n * std::min(1.0, std::max(compute, copy));
}

double BoardHostCores(const Cluster& c, const HostRate& host) {
  double need = 0;
  for (const auto& d : c.devices) {
    if (!d.OnBoardRates()) continue;
    const BoardRates r = ScaleRates(d.board->rates, d.board_speed);
    const double fastest = std::max(
        {r.winograd_macs_per_s, r.gemm_macs_per_s, r.depthwise_macs_per_s});
    double share = 0;
    if (host.conv_macs_per_cpu_second > 0) {
      share = fastest / host.conv_macs_per_cpu_second;
    }
    if (host.gemm_macs_per_cpu_second > 0) {
      share = std::max(
          share, r.memory_bytes_per_s / (4 * host.gemm_macs_per_cpu_second));
    }
    if (host.copy_bytes_per_cpu_second > 0) {
      share += r.memory_bytes_per_s / host.copy_bytes_per_cpu_second;
    }
    need += share;
  }
  return need;
}

double DilationFor(double need, int host_cores) {
  const double usable = 0.5 * std::max(1, host_cores);
  const double k = need / usable;
  return k <= 1 ? 1.0 : std::ceil(k * 2) / 2;
}

}  // namespace shoal
