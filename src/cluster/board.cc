#include "cluster/board.h"

#include <algorithm>

#include "graph/op_registry.h"

namespace shoal {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// 2.4 GHz Wi-Fi as the LCP paper measured it between Pi 3s: 62.24 Mbit/s,
// 8.83 ms for 64 B.
constexpr double kWifiBps = 62e6, kWifiLatencyS = 9e-3;
// Gigabit Ethernet through a switch: about 940 Mbit/s of TCP payload, a
// round trip of a few hundred microseconds.
constexpr double kGigabitBps = 940e6, kGigabitLatencyS = 0.2e-3;

PowerSpec Watts(double idle, double busy, const std::string& source) {
  PowerSpec p;
  p.idle_w = idle;
  p.busy_w = busy;
  p.source = source;
  return p;
}

BoardRates Rates(double winograd, double gemm, double depthwise, double memory,
                 double step_s) {
  return BoardRates{winograd, gemm, depthwise, memory, step_s};
}

std::vector<BoardClass> MakeClasses() {
  std::vector<BoardClass> v;
  // The fitted rates are sim/board_fit.h's fit to ncnn's published figures
  // (benchmark/README.md of the ncnn repository, `benchncnn ... 4
  // threads`); BoardFit.TableHoldsTheFit keeps them equal.
  {
    BoardClass b;
    b.name = "pi3b+";
    b.title = "Raspberry Pi 3 Model B+";
    b.cpu = "Cortex-A53 1.4 GHz x 4";
    b.cores = 4;
    b.memory_bytes = kGiB;
    b.link_bandwidth_bps = kWifiBps;
    b.link_latency_s = kWifiLatencyS;
    b.link_title = "2.4 GHz Wi-Fi (62 Mbit/s, 9 ms: the LCP paper's)";
    b.power = Pi3Power();
    b.rates = Rates(8.39e9, 8.48e9, 2.24e9, 3.43e9, 0.640e-3);
    b.basis = "fitted to ncnn's figures for a Pi 3B+, 4 threads";
    b.fitted = true;
    v.push_back(b);
  }
  {
    BoardClass b;
    b.name = "pi4b";
    b.title = "Raspberry Pi 4 Model B";
    b.cpu = "Cortex-A72 1.8 GHz x 4";
    b.cores = 4;
    b.memory_bytes = 4 * kGiB;
    b.link_bandwidth_bps = kGigabitBps;
    b.link_latency_s = kGigabitLatencyS;
    b.link_title = "Gigabit Ethernet (940 Mbit/s, 0.2 ms)";
    // pidramble.com's power benchmarks: 540 mA idle, 1280 mA with four
    // cores under stress, at 5 V.
    b.power = Watts(2.7, 6.4, "Raspberry Pi 4B figures");
    b.rates = Rates(27.05e9, 16.61e9, 4.59e9, 6.94e9, 0.506e-3);
    b.basis = "fitted to ncnn's figures for a Pi 4B at 1.8 GHz, 4 threads";
    b.fitted = true;
    v.push_back(b);
  }
  {
    BoardClass b;
    b.name = "pi5";
    b.title = "Raspberry Pi 5";
    b.cpu = "Cortex-A76 2.4 GHz x 4";
    b.cores = 4;
    b.memory_bytes = 4 * kGiB;
    b.link_bandwidth_bps = kGigabitBps;
    b.link_latency_s = kGigabitLatencyS;
    b.link_title = "Gigabit Ethernet (940 Mbit/s, 0.2 ms)";
    // No measurement taken for it here: a Pi 4B's.
    b.power = Watts(2.7, 6.4, "Raspberry Pi 4B figures");
    const BoardRates pi4 = v.back().rates;
    // ncnn publishes no Pi 5 figures: Raspberry Pi's announcement gives
    // "2-3x" a Pi 4's CPU performance; LPDDR4X-4267 against LPDDR4-3200
    // and a wider core give its memory about twice a Pi 4's rate.
    b.rates = Rates(pi4.winograd_macs_per_s * 2.5, pi4.gemm_macs_per_s * 2.5,
                    pi4.depthwise_macs_per_s * 2.5,
                    pi4.memory_bytes_per_s * 2.0, pi4.step_s / 2.0);
    b.basis =
        "estimate: a Pi 4B x 2.5 on arithmetic, x 2 on memory (no ncnn "
        "figure published)";
    v.push_back(b);
  }
  {
    BoardClass b;
    b.name = "pi-zero-2w";
    b.title = "Raspberry Pi Zero 2 W";
    b.cpu = "Cortex-A53 1.0 GHz x 4";
    b.cores = 4;
    b.memory_bytes = 512 * kMiB;
    b.link_bandwidth_bps = kWifiBps;
    b.link_latency_s = kWifiLatencyS;
    b.link_title = "2.4 GHz Wi-Fi (62 Mbit/s, 9 ms)";
    b.power = Pi3Power();
    b.rates = Rates(6.10e9, 6.31e9, 1.58e9, 1.49e9, 0.197e-3);
    b.basis = "fitted to ncnn's figures for a Pi Zero 2 W, 4 threads";
    b.fitted = true;
    v.push_back(b);
  }
  {
    BoardClass b;
    b.name = "laptop";
    b.title = "x86 laptop";
    b.cpu = "4 cores with AVX2";
    b.cores = 4;
    b.memory_bytes = 8 * kGiB;
    b.link_bandwidth_bps = kGigabitBps;
    b.link_latency_s = kGigabitLatencyS;
    b.link_title = "Gigabit Ethernet (940 Mbit/s, 0.2 ms)";
    b.power = Watts(5.0, 30.0, "a laptop's, estimated");
    const BoardRates pi4 = v[1].rates;
    // A 4-core AVX2 laptop does 8 f32 FMAs per instruction, twice per
    // cycle, at about twice a Pi 4's clock: about 8x a Pi 4B on
    // arithmetic, and dual-channel DDR4 streams about 20 GB/s.
    b.rates = Rates(pi4.winograd_macs_per_s * 8, pi4.gemm_macs_per_s * 8,
                    pi4.depthwise_macs_per_s * 8, 20e9, 0.05e-3);
    b.basis = "estimate: a Pi 4B x 8 on arithmetic, 20 GB/s memory";
    v.push_back(b);
  }
  {
    BoardClass b;
    b.name = "pi3-lcp";
    b.title = "Raspberry Pi 3 as the LCP paper ran it (TensorFlow)";
    b.cpu = "Cortex-A53 1.2 GHz x 4";
    b.cores = 4;
    b.memory_bytes = kGiB;
    b.link_bandwidth_bps = kWifiBps;
    b.link_latency_s = kWifiLatencyS;
    b.link_title = "2.4 GHz Wi-Fi (62 Mbit/s, 9 ms: the LCP paper's)";
    b.power = Pi3Power();
    // Priced per MAC and per weight byte (sim/latency_model.h), not by
    // these rates; they say the same for a reader.
    b.rates = Rates(kLcpPi3MacsPerSecond, kLcpPi3MacsPerSecond,
                    kLcpPi3MacsPerSecond, 1.2e9, 0);
    b.basis = "the LCP paper: VGG16 in 9.4 s (its Fig. 12)";
    b.lcp_paper = true;
    v.push_back(b);
  }
  {
    // The collaborative-execution paper's Pi 3 (its Table 4 and §6): the
    // same board and framework family as the LCP paper's, so the same
    // rate, on its wired LAN; its memory is accounted as Keras held it,
    // and what does not fit is paged (cluster/swap.h). Unlike `pi3-lcp`
    // it is emulated as the other classes are, each task held to its time
    // at these rates, so that its measured figures do not move with the
    // host as a share of a host core does.
    BoardClass b;
    b.name = "pi3-collab";
    b.title =
        "Raspberry Pi 3 as the collaborative-execution paper ran it (Keras "
        "2.1, TensorFlow 1.5, swapping)";
    b.cpu = "Cortex-A53 1.2 GHz x 4";
    b.cores = 4;
    b.memory_bytes = kGiB;
    b.link_bandwidth_bps = 94.1e6;
    b.link_latency_s = 0.4e-3;
    b.link_title = "its LAN (94.1 Mbit/s, 0.4 ms: the paper's)";
    b.power = Pi3Power();
    b.rates = Rates(kLcpPi3MacsPerSecond, kLcpPi3MacsPerSecond,
                    kLcpPi3MacsPerSecond, 1.2e9, 0);
    b.basis =
        "TensorFlow on a Pi 3 as the LCP paper measured it (VGG16 in 9.4 s)";
    v.push_back(b);
  }
  return v;
}

}  // namespace

const std::vector<BoardClass>& BoardClasses() {
  static const std::vector<BoardClass> classes = MakeClasses();
  return classes;
}

const BoardClass* FindBoard(std::string_view name) {
  for (const auto& b : BoardClasses()) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::string BoardNames() {
  std::string s;
  for (const auto& b : BoardClasses()) s += (s.empty() ? "" : ", ") + b.name;
  return s;
}

double BoardNodeSeconds(const BoardRates& r, const NodeCost& c) {
  const OpSchema* op = OpRegistry::Global().Find(c.op);
  if (op != nullptr && op->split().relayout) return 0;
  const double bytes =
      double(c.input_bytes() + c.output_bytes() + c.weight_bytes());
  const double memory_s =
      r.memory_bytes_per_s > 0 ? bytes / r.memory_bytes_per_s : 0;
  if (c.macs == 0 && op != nullptr &&
      (op->elementwise() || op->channel_weights())) {
    return memory_s;
  }
  double rate = r.gemm_macs_per_s;
  if (c.mac_kind == MacKind::kWinograd3x3) rate = r.winograd_macs_per_s;
  if (c.mac_kind == MacKind::kDepthwise) rate = r.depthwise_macs_per_s;
  const double macs_s = rate > 0 ? double(c.macs) / rate : 0;
  return r.step_s + std::max(macs_s, memory_s);
}

double BoardMessageSeconds(const BoardRates& r, int64_t bytes) {
  return r.step_s + (r.memory_bytes_per_s > 0
                         ? 2.0 * double(bytes) / r.memory_bytes_per_s
                         : 0.0);
}

BoardRates ScaleRates(const BoardRates& r, double speed) {
  return BoardRates{r.winograd_macs_per_s * speed, r.gemm_macs_per_s * speed,
                    r.depthwise_macs_per_s * speed,
                    r.memory_bytes_per_s * speed, r.step_s / speed};
}

double RelativeSpeed(const BoardClass& b) {
  return b.lcp_paper ? 1.0 : b.rates.gemm_macs_per_s / kLcpPi3MacsPerSecond;
}

}  // namespace shoal
