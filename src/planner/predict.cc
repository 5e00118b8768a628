#include "planner/predict.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "cluster/swap.h"
#include "graph/cost.h"
#include "sim/simulator.h"

namespace shoal {

namespace {

// Requests the simulator runs for the latency under quotas.
constexpr int64_t kQuotaRequests = 8;

int64_t Lcm(int64_t a, int64_t b, int64_t cap) {
  const int64_t l = a / std::gcd(a, b) * b;
  return std::min(l, cap);
}

class Predictor {
 public:
  Predictor(const Plan& p, const LatencyModel& m) : p_(p), m_(m) {}

  Status Init() {
    if (m_.num_devices() != static_cast<int>(p_.devices.size())) {
      return InvalidArgument(
          "the latency model has " + std::to_string(m_.num_devices()) +
          " devices but the plan has " + std::to_string(p_.devices.size()));
    }
    outgoing_.assign(p_.tasks.size() + 1, {});
    incoming_.assign(p_.tasks.size(), {});
    for (size_t i = 0; i < p_.transfers.size(); ++i) {
      const Transfer& x = p_.transfers[i];
      outgoing_[x.src.task < 0 ? p_.tasks.size() : x.src.task].push_back(i);
      if (x.dst.task >= 0) incoming_[x.dst.task].push_back(i);
    }
    std::vector<const DeviceSpec*> specs;
    for (const auto& d : m_.cluster().devices) specs.push_back(&d);
    swap_ = SwapTable(p_, specs);
    secs_.resize(p_.tasks.size());
    for (const auto& t : p_.tasks) {
      // A task's node costs do not depend on the device; price them once.
      std::vector<NodeCost> costs;
      for (const auto& n : t.fragment.nodes) {
        ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(t.fragment, n));
        costs.push_back(std::move(c));
      }
      for (int d : t.devices) secs_[t.id][d] = m_.FragmentSeconds(d, costs);
    }
    return Status::Ok();
  }

  int Dev(int task, int64_t r) const { return p_.DeviceOf(task, r); }
  int64_t Bytes(const Transfer& x) const { return p_.WireBytes(x); }

  // A device's CPU as the simulator counts it (sim/simulator.cc). Under a
  // quota the idle worker's CPU comes out of every period's quota, and the
  // messages' CPU takes the device's quota like compute; the latency is
  // then the simulator's, since when a message's CPU costs its device time
  // depends on what else the device runs then.
  bool Limited(int d) const { return m_.Quota(d).limited(); }
  // Host CPU seconds as busy time per request, for the throughput.
  double CpuTime(int d, double cpu_s) const {
    return Limited(d) ? cpu_s / m_.QuotaLeft(d).fraction() : cpu_s;
  }
  // A message's host CPU at its ends: the sender's unless the coordinator
  // sends it (the model input), the receiver's unless it goes to the
  // coordinator (the model output); none when it stays on one device.
  double SendCpu(const Transfer& x, int s, int d) const {
    if (x.src.task == kModelInput) return 0;
    if (s == d && x.dst.task != kModelOutput) return 0;
    return m_.SendCpuSeconds(s, Bytes(x));
  }
  double RecvCpu(const Transfer& x, int s, int d) const {
    if (x.dst.task == kModelOutput) return 0;
    if (s == d && x.src.task != kModelInput) return 0;
    return m_.RecvCpuSeconds(d, Bytes(x));
  }

  // The simulator's mean over requests sent one after another: it sends
  // as the runtime does (several sender threads whose latencies overlap,
  // bytes queued on the link, broadcast trees), and under quotas each
  // request meets the devices' periods at another point.
  StatusOr<double> SimulatedLatency(int64_t requests) const {
    SimOptions o;
    o.requests = static_cast<int>(requests);
    o.concurrency = 1;
    ASSIGN_OR_RETURN(const SimResult r, Simulate(p_, m_, o));
    double sum = 0;
    for (double ms : r.latency_ms) sum += ms * 1e-3;
    return r.latency_ms.empty() ? 0.0 : sum / double(r.latency_ms.size());
  }

  StatusOr<Prediction> Run() {
    RETURN_IF_ERROR(Init());
    const size_t nd = p_.devices.size();
    Prediction pr;
    pr.compute_s.assign(nd, 0);
    pr.send_s.assign(nd, 0);
    // Compute: each turn in a task's deal runs 1/k of its requests (a
    // device listed w times, w/k).
    int64_t period = 1;
    for (const auto& t : p_.tasks) {
      const double k = static_cast<double>(t.devices.size());
      for (int d : t.devices) {
        // Under a quota the idle worker's share is not the tasks'.
        const double slow =
            Limited(d) ? m_.Quota(d).fraction() / m_.QuotaLeft(d).fraction()
                       : 1.0;
        pr.compute_s[d] += secs_[t.id].at(d) * slow / k;
        // Paging (cluster/swap.h) keeps the device as busy as compute.
        if (!swap_.empty()) pr.compute_s[d] += swap_[size_t(t.id) * nd + d] / k;
      }
      period = Lcm(period, static_cast<int64_t>(t.devices.size()), 1 << 20);
    }
    // Sends: averaged over the requests after which the round robin of the
    // two ends repeats.
    auto replicas = [&](int task) -> int64_t {
      return task < 0 ? 1 : p_.tasks[task].devices.size();
    };
    for (const auto& x : p_.transfers) {
      const int64_t n = Lcm(replicas(x.src.task), replicas(x.dst.task), 4096);
      for (int64_t r = 0; r < n; ++r) {
        const int s = Dev(x.src.task, r), d = Dev(x.dst.task, r);
        if (x.src.task != kModelInput) {
          pr.send_s[s] += m_.TransferSeconds(s, d, Bytes(x)) / double(n);
        }
        // The channel carries what leaves a device for another, as the
        // simulator and the workers' transport count it: the input sent
        // for the input device, and output parts sent from any device
        // but the output device (which hands the coordinator its own).
        if (s != d) {
          pr.medium_s += m_.cluster().network.Airtime(Bytes(x)) / double(n);
        }
        // The messages' CPU is the devices' work when a quota makes it so.
        if (Limited(s)) {
          pr.compute_s[s] += CpuTime(s, SendCpu(x, s, d)) / double(n);
        }
        if (Limited(d)) {
          pr.compute_s[d] += CpuTime(d, RecvCpu(x, s, d)) / double(n);
        }
      }
    }
    bool limited = false;
    for (size_t d = 0; d < nd; ++d) limited |= Limited(static_cast<int>(d));
    const int64_t nl = std::min<int64_t>(period, kLatencyRequests);
    ASSIGN_OR_RETURN(
        pr.latency_s,
        SimulatedLatency(limited ? std::max<int64_t>(nl, kQuotaRequests) : nl));
    double busiest = 0;
    for (size_t d = 0; d < nd; ++d) {
      const double b = std::max(pr.compute_s[d], pr.send_s[d]);
      if (b > busiest) {
        busiest = b;
        pr.bottleneck = static_cast<int>(d);
      }
    }
    busiest = std::max(busiest, pr.medium_s);
    pr.throughput_rps = busiest > 0 ? 1 / busiest : 0;
    return pr;
  }

 private:
  const Plan& p_;
  const LatencyModel& m_;
  std::vector<std::vector<size_t>> outgoing_;  // by source task (+ input)
  std::vector<std::vector<size_t>> incoming_;
  std::vector<std::map<int, double>> secs_;  // task -> device -> seconds
  std::vector<double> swap_;  // task * devices + device (cluster/swap.h)
};

}  // namespace

StatusOr<Prediction> PredictPlan(const Plan& p, const LatencyModel& m) {
  Predictor pr(p, m);
  return pr.Run();
}

double ObjectiveValue(const Prediction& pr, PlanObjective objective) {
  return objective == PlanObjective::kThroughput ? pr.period_s() : pr.latency_s;
}

std::vector<DevicePrediction> DeviceRows(const Plan& p, const Prediction& pr) {
  std::vector<DevicePrediction> rows;
  for (size_t d = 0; d < p.devices.size(); ++d) {
    DevicePrediction r;
    r.device = p.devices[d].name;
    r.compute_s = pr.compute_s[d];
    r.communication_s = pr.send_s[d];
    r.idle_s = std::max(0.0, pr.latency_s - r.compute_s - r.communication_s);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace shoal
