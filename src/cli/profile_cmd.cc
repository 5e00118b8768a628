// `shoal profile MODEL --cluster FILE.yaml [-o profile.json]`: the profiling
// database of the collaborative-execution paper's Step 1, measured on the
// cluster's own workers (src/profile/profiler.h). An existing output file is
// merged into, so one profile serves several models on the same cluster.
#include <unistd.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>

#include "cli/commands.h"
#include "cli/plan_common.h"
#include "profile/profiler.h"
#include "sim/fit.h"
#include "util/progress_bar.h"
#include "util/units.h"

namespace shoal {
namespace {

struct ProfileArgs {
  std::string model, cluster, out = "profile.json", input_shape, advertise;
  int repeat = 3;
  int rounds = 3;
  double min_seconds = 0.2;
  int64_t timeout_ms = 300000;
};

// Runs the profiler on every device of `cluster`, showing its progress: a
// bar on a terminal, else a line every ten steps.
StatusOr<Profile> MeasureCluster(const ProfileArgs& a, const Cluster& cluster,
                                 const Model& m,
                                 const std::vector<LayerVariant>& variants) {
  ProfilerOptions o;
  o.model = a.model;
  o.graph = &m.graph;
  o.repeat = a.repeat;
  o.rounds = a.rounds;
  o.min_seconds = a.min_seconds;
  o.rpc_timeout_ms = a.timeout_ms;
  o.advertise = a.advertise;
  const bool tty = isatty(2);
  std::mutex mu;
  std::map<std::string, int> done;
  const int total = static_cast<int>(cluster.devices.size()) *
                    ProfileStepsPerDevice(variants.size(), o);
  ProgressBar bar("profiling", total, ProgressBar::Unit::kCount, tty);
  o.progress = [&](const ProfileProgress& pr) {
    std::lock_guard<std::mutex> lock(mu);
    done[pr.device] = pr.done;
    int all = 0;
    for (const auto& [d, k] : done) all += k;
    if (tty) {
      std::ostringstream note;
      note << pr.device << ": " << pr.what << " " << std::fixed
           << std::setprecision(2) << pr.seconds * 1e3 << " ms";
      bar.Update(all, note.str());
    } else if (pr.done == pr.total || pr.done % 10 == 0) {
      std::cerr << "  " << pr.device << ": " << pr.done << "/" << pr.total
                << " (" << pr.what << ")\n";
    }
  };
  ASSIGN_OR_RETURN(Profile fresh, ProfileCluster(cluster, variants, o));
  bar.Finish();
  return fresh;
}

// `fresh` merged into the profile already in `out`, where there is one.
StatusOr<Profile> MergedWithExisting(const Profile& fresh,
                                     const std::string& out) {
  Profile p;
  if (std::filesystem::exists(out)) {
    auto old = LoadProfile(out);
    if (!old.ok()) {
      return old.status().WithContext("not merging into " + out);
    }
    p = std::move(old).value();
    std::cout << "merging into " << out << " (" << p.devices.size()
              << " devices)\n";
  }
  MergeProfile(fresh, &p);
  return p;
}

// Per device: its compute and link fits, then its per-message CPU.
void PrintDevices(const Profile& p) {
  std::cout << std::fixed;
  std::cout << "device        samples  conv GMAC/s  fit intercept ms  "
               "link Mbit/s  latency ms  cpu quota\n";
  for (const auto& d : p.devices) {
    const auto conv = d.fits.count("Conv") ? d.fits.at("Conv") : d.fits.at("*");
    std::cout << "  " << std::left << std::setw(12) << d.name << std::right
              << std::setw(7) << d.samples.size() << std::setw(13)
              << std::setprecision(3)
              << (conv.per_mac_s > 0 ? 1e-9 / conv.per_mac_s : 0.0)
              << std::setw(18) << conv.intercept_s * 1e3 << std::setw(13)
              << std::setprecision(1) << d.link.bandwidth_bps / 1e6
              << std::setw(12) << std::setprecision(2) << d.link.latency_s * 1e3
              << "  "
              << (d.has_cpu_quota && d.cpu_quota.limited()
                      ? Percent(d.cpu_quota.quota_s / d.cpu_quota.period_s) +
                            " of a core"
                      : std::string("none"))
              << "\n";
  }
  // What the simulator charges a device's CPU per message (profile/path_cpu.h):
  // under a quota it is the device's time, like compute.
  std::cout << "device        send ms/msg  recv ms/msg  send us/KiB  "
               "recv us/KiB  idle ms/s\n";
  for (const auto& d : p.devices) {
    std::cout << "  " << std::left << std::setw(12) << d.name << std::right
              << std::setprecision(3) << std::setw(11) << d.send_cpu_s * 1e3
              << std::setw(13) << d.recv_cpu_s * 1e3 << std::setw(13)
              << d.send_cpu_per_byte_s * 1024e6 << std::setw(13)
              << d.recv_cpu_per_byte_s * 1024e6 << std::setw(11)
              << d.idle_cpu_per_s * 1e3 << "\n";
  }
}

Status RunProfile(const ProfileArgs& a) {
  if (a.repeat < 1) return InvalidArgument("--repeat must be >= 1");
  if (a.rounds < 1) return InvalidArgument("--rounds must be >= 1");
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(a.cluster));
  ModelRef ref;
  ref.spec = a.model;
  ASSIGN_OR_RETURN(auto shape, ParseInputShapeFlag(a.input_shape));
  if (shape) ref.input_shape = *shape;
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(ref, false));
  ASSIGN_OR_RETURN(std::vector<LayerVariant> variants,
                   ProfileVariants(m.graph));
  std::cerr << "profiling " << a.model << " on " << cluster.devices.size()
            << " devices of " << a.cluster << ": " << variants.size()
            << " layer variants and the whole model, " << a.rounds
            << (a.rounds == 1 ? " round" : " rounds")
            << " each, then each device's link\n";
  ASSIGN_OR_RETURN(Profile fresh, MeasureCluster(a, cluster, m, variants));
  ASSIGN_OR_RETURN(Profile p, MergedWithExisting(fresh, a.out));
  RETURN_IF_ERROR(SaveProfile(p, a.out));
  PrintDevices(p);
  std::cout << "wrote " << a.out << "\n";
  return Status::Ok();
}

}  // namespace

void AddProfileCommand(CLI::App* app) {
  auto a = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app->add_subcommand(
      "profile",
      "Measure every layer (and its split variants) and every link on a "
      "cluster's workers; fit per-device latency models");
  cmd->add_option("model", a->model, "Zoo name or .onnx file")->required();
  cmd->add_option("--cluster", a->cluster, "Cluster file (YAML)")->required();
  cmd->add_option("-o,--output", a->out,
                  "Profile file (JSON; merged into when it exists; default "
                  "profile.json)");
  cmd->add_option("--repeat", a->repeat,
                  "Timed runs per layer variant and round at least (default "
                  "3)");
  cmd->add_option("--rounds", a->rounds,
                  "Time every variant this many times, a round apart, and "
                  "keep the median (default 3)");
  cmd->add_option("--min-seconds", a->min_seconds,
                  "Time each variant for at least this long (default 0.2: "
                  "ten 20 ms CPU quota periods)");
  cmd->add_option("--input-shape", a->input_shape, "Override the input shape");
  cmd->add_option("--timeout-ms", a->timeout_ms,
                  "Deadline of one measurement (default 300000)");
  AddAdvertiseOption(cmd, &a->advertise);
  cmd->callback([a] { throw CommandExit(ReportStatus(RunProfile(*a))); });
}

}  // namespace shoal
