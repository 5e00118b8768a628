#include "serve/generation.h"

#include <algorithm>

#include "partition/strategy.h"
#include "sim/latency_model.h"

namespace shoal {

std::string DefaultServeStrategy() {
  const auto names = StrategyNames();
  return std::find(names.begin(), names.end(), "auto") != names.end()
             ? "auto"
             : "pipeline";
}

StatusOr<PlanChoice> PlanForDevices(const Graph& g, const PlanOptions& base,
                                    const std::vector<DeviceSpec>& devices) {
  if (devices.empty()) return Unavailable("no device is left to plan for");
  PlanOptions po = base;
  po.devices.clear();
  Cluster c;
  for (DeviceSpec d : devices) {
    po.devices.push_back(PlanDevice{d.name, d.speed, d.memory_bytes});
    d.cpu = 0;  // speeds as measured, as PredictComputeMs (serve/monitor.h)
    d.system_cpu = 0;
    c.devices.push_back(d);
  }
  // auto predicts its candidates on this model: the speeds and the links.
  po.latency = std::make_shared<LatencyModel>(LatencyModel::FromCluster(c));
  po.link_rates = c.UplinkRates();
  po.link_latency_s = c.MaxLinkLatency();
  const std::string strategy = base.strategy;
  const bool unknown = StrategyRegistry::Global().Find(strategy) == nullptr;
  auto p = MakePlan(g, po);
  if (p.ok()) return PlanChoice{std::move(p).value(), strategy, ""};
  if (strategy == "pipeline" || unknown) {
    return p.status().WithContext("strategy " + strategy);
  }
  const std::string why = p.status().message();
  po.strategy = "pipeline";
  auto q = MakePlan(g, po);
  if (!q.ok()) {
    return q.status().WithContext("strategy " + strategy + " failed (" + why +
                                  "), and so did pipeline");
  }
  return PlanChoice{std::move(q).value(), "pipeline",
                    "strategy " + strategy + " did not apply (" + why +
                        "); fell back to pipeline"};
}

void Generation::Enter() {
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_++;
}

void Generation::Leave() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--in_flight_ == 0) cv_.notify_all();
}

int Generation::InFlight() {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

bool Generation::WaitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return in_flight_ == 0; });
}

}  // namespace shoal
