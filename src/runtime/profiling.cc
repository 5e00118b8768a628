#include "runtime/profiling.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "models/zoo.h"
#include "runtime/cpu_pacer.h"

namespace shoal {

namespace {

// The cgroup path of `controller` in /proc/self/cgroup ("" if absent; v2's
// unified line "0::/path" is returned for controller "").
bool OwnCgroup(const std::string& controller, std::string* path) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::stringstream ss(line.substr(a + 1, b - a - 1));
    std::string c;
    bool match = controller.empty() && b == a + 1;
    while (!match && std::getline(ss, c, ',')) match = c == controller;
    if (match) {
      *path = line.substr(b + 1);
      if (*path == "/") path->clear();
      return true;
    }
  }
  return false;
}

int64_t ReadInt(const std::string& file) {
  std::ifstream f(file);
  int64_t v = -1;
  if (!(f >> v)) return -1;
  return v;
}

}  // namespace

std::vector<NodeTime> AttributeSteps(const Graph& g,
                                     const std::vector<std::string>& labels,
                                     const std::vector<double>& seconds,
                                     double total_seconds) {
  std::map<std::string, double> by_node;
  double sum = 0;
  for (size_t i = 0; i < labels.size() && i < seconds.size(); ++i) {
    size_t at = i;
    if (labels[i].rfind("reorder ", 0) == 0) {
      at = labels.size();
      for (size_t j = i + 1; j < labels.size() && at == labels.size(); ++j) {
        if (labels[j].rfind("reorder ", 0) != 0) at = j;
      }
      for (size_t j = i; at == labels.size() && j-- > 0;) {
        if (labels[j].rfind("reorder ", 0) != 0) at = j;
      }
      if (at == labels.size()) continue;  // only reorders: no node to own it
    }
    // A conv with its activation fused is labelled "conv+Relu".
    std::string node = labels[at];
    if (g.FindNode(node) == nullptr && node.find('+') != std::string::npos)
      node = node.substr(0, node.rfind('+'));
    by_node[node] += seconds[i];
    sum += seconds[i];
  }
  const double scale = sum > 0 ? total_seconds / sum : 0;
  std::vector<NodeTime> out;
  for (const auto& n : g.nodes) {
    auto it = by_node.find(n.name);
    out.push_back({n.name, it == by_node.end() ? 0.0 : it->second * scale});
  }
  return out;
}

StatusOr<Timing> TimeGraph(const Graph& g, const TimingOptions& o) {
  SetKernelThreads(o.threads);
  ExecutorOptions eo;
  eo.backend = o.backend;
  eo.threads = o.threads;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(g, RandomWeights(g, o.seed), eo));
  std::vector<Tensor> inputs;
  std::mt19937_64 rng(o.seed + 1);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const auto& name : g.inputs) {
    Tensor t(g.tensors.at(name).shape);
    for (auto& v : t.data) v = nd(rng);
    inputs.push_back(std::move(t));
  }
  std::vector<Tensor> outs;
  RETURN_IF_ERROR(ex->Run(inputs, &outs));  // warm-up: first-touch costs
  using Clock = std::chrono::steady_clock;
  std::vector<double> each, each_cpu;
  std::vector<double> steps;
  const auto t0 = Clock::now();
  double cpu = 0;
  double elapsed = 0;
  while (true) {
    const auto a = Clock::now();
    const double cpu0 = CpuSeconds(o.threads > 1);
    RETURN_IF_ERROR(ex->Run(inputs, &outs, o.per_node ? &steps : nullptr));
    const double used = CpuSeconds(o.threads > 1) - cpu0;
    cpu += used;
    each_cpu.push_back(used);
    if (o.hold_seconds >= 0) {
      PaceTo(a, o.hold_seconds);
    } else {
      PaceCompute(o.cpu_fraction, a, used);
    }
    const auto b = Clock::now();
    each.push_back(std::chrono::duration<double>(b - a).count() / o.dilation);
    elapsed = std::chrono::duration<double>(b - t0).count();
    const bool enough =
        static_cast<int>(each.size()) >= o.min_runs && elapsed >= o.min_seconds;
    if (enough || elapsed >= o.max_seconds || each.size() >= 1000000) break;
  }
  Timing t;
  t.runs = static_cast<int64_t>(each.size());
  t.seconds_mean = elapsed / t.runs / o.dilation;
  t.cpu_seconds_mean = cpu / t.runs;
  std::sort(each.begin(), each.end());
  t.seconds_median = each[each.size() / 2];
  t.seconds_min = each.front();
  std::sort(each_cpu.begin(), each_cpu.end());
  t.cpu_seconds_median = each_cpu[each_cpu.size() / 2];
  if (o.per_node) {
    t.node_seconds =
        AttributeSteps(g, ex->step_labels(), steps, t.seconds_mean);
  }
  return t;
}

CpuQuota OwnCpuQuota() {
  CpuQuota q;
  std::string path;
  if (OwnCgroup("cpu", &path)) {  // v1
    const std::string dir = "/sys/fs/cgroup/cpu" + path;
    const int64_t quota = ReadInt(dir + "/cpu.cfs_quota_us");
    const int64_t period = ReadInt(dir + "/cpu.cfs_period_us");
    if (quota > 0 && period > 0) {
      q.quota_s = quota * 1e-6;
      q.period_s = period * 1e-6;
    }
    return q;
  }
  if (OwnCgroup("", &path)) {  // v2: "max 100000" or "6000 100000"
    std::ifstream f("/sys/fs/cgroup" + path + "/cpu.max");
    std::string quota;
    int64_t period = 0;
    if (f >> quota >> period && quota != "max" && period > 0) {
      q.quota_s = std::stoll(quota) * 1e-6;
      q.period_s = period * 1e-6;
    }
  }
  return q;
}

}  // namespace shoal
