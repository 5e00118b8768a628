// One plan as `shoal serve` runs it: the plan, the devices and speeds it was
// made for, its coordinator, and the requests running on it (so a switch to
// the next generation can wait for them: the drain).
#ifndef SHOAL_SERVE_GENERATION_H_
#define SHOAL_SERVE_GENERATION_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "graph/graph.h"
#include "partition/strategy.h"
#include "plan/plan.h"
#include "runtime/coordinator.h"

namespace shoal {

struct PlanChoice {
  Plan plan;
  std::string strategy;  // what made it
  std::string note;      // why another strategy than asked, or ""
};

// The strategy `shoal serve` uses by default: `auto` once registered,
// else `pipeline`.
std::string DefaultServeStrategy();

// Plans `g` over `devices` (in this order) by `base.strategy`, with the
// rest of `base` (model, objective, time limit): split sizes follow the
// devices' `speed`, and `auto` predicts on a latency model of those speeds
// and links. A strategy that cannot apply to this device set falls back to
// `pipeline`, and the choice says why.
StatusOr<PlanChoice> PlanForDevices(const Graph& g, const PlanOptions& base,
                                    const std::vector<DeviceSpec>& devices);

class Generation {
 public:
  Generation(int64_t id, PlanChoice choice, std::vector<DeviceSpec> devices,
             std::vector<double> predicted_ms,
             std::unique_ptr<Coordinator> coord)
      : id_(id),
        choice_(std::move(choice)),
        devices_(std::move(devices)),
        predicted_ms_(std::move(predicted_ms)),
        coord_(std::move(coord)) {}

  int64_t id() const { return id_; }
  const Plan& plan() const { return choice_.plan; }
  const std::string& strategy() const { return choice_.strategy; }
  const std::string& note() const { return choice_.note; }
  Coordinator& coord() { return *coord_; }

  // Per plan device: its spec, `speed` what the plan assumed, and the
  // predicted compute per request. Read and changed by the monitor only
  // (adopting measured speeds without a new plan), and by status reports
  // under the server's lock.
  std::vector<DeviceSpec>& devices() { return devices_; }
  std::vector<double>& predicted_ms() { return predicted_ms_; }

  // Requests running on this generation.
  void Enter();
  void Leave();
  int InFlight();
  // Until no request runs here, or `deadline`; whether it drained.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline);

 private:
  const int64_t id_;
  const PlanChoice choice_;
  std::vector<DeviceSpec> devices_;
  std::vector<double> predicted_ms_;
  std::unique_ptr<Coordinator> coord_;
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_SERVE_GENERATION_H_
