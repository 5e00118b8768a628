#include "profile/path_cpu.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "graph/random_input.h"
#include "models/builder.h"
#include "partition/strategy.h"
#include "profile/worker_health.h"
#include "runtime/coordinator.h"
#include "runtime/wire.h"

namespace shoal {

namespace {

// The op a probe graph runs: its output as large as its input, or one
// value per channel.
enum class ProbeOp { kRelu, kGlobalAveragePool };

// One op over `shape`.
StatusOr<Graph> OneOp(ProbeOp op, const Shape& shape) {
  GraphBuilder b("path-cpu");
  const std::string x = b.Input("x", shape);
  const std::string y = op == ProbeOp::kRelu ? b.Relu(x) : b.GlobalAvgPool(x);
  return b.Finish({y});
}

// Host CPU seconds per request of a one-task plan of `g` on `d`, less the
// idle CPU over the same wall time and the task's own compute.
StatusOr<double> TimeRequests(const DeviceSpec& d, rpc::Worker::Stub* stub,
                              const Graph& g, double idle_cpu_per_s,
                              const PathCpuOptions& o) {
  Cluster one;
  one.devices = {d};
  PlanOptions po;
  po.strategy = "pipeline";
  po.devices = one.PlanDevices();
  po.model.spec = "path-cpu";
  ASSIGN_OR_RETURN(Plan plan, MakePlan(g, po));
  CoordinatorOptions co;
  co.timeout_ms = o.timeout_ms;
  co.deploy_timeout_ms = o.timeout_ms;
  co.advertise = o.advertise;
  co.tls = o.tls;
  // A plan the worker already serves (`shoal serve`) stays beside this one
  // and is current again after the Release below.
  co.keep_previous = true;
  ASSIGN_OR_RETURN(auto coord, Coordinator::Create(plan, one, co));
  RETURN_IF_ERROR(coord->Deploy(WeightStore{}, nullptr));
  auto run = [&]() -> StatusOr<double> {
    const Tensor input = RandomInput(plan.input_shape, 1);
    Tensor out;
    int64_t seq = 0;
    for (; seq < 2; ++seq) {
      RETURN_IF_ERROR(coord->Run(input, &out, nullptr, seq));
    }
    RETURN_IF_ERROR(coord->Stats(/*reset=*/true).status());
    ASSIGN_OR_RETURN(const double c0, WorkerProcessCpu(d, stub));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.requests; ++i, ++seq) {
      RETURN_IF_ERROR(coord->Run(input, &out, nullptr, seq));
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    ASSIGN_OR_RETURN(const double c1, WorkerProcessCpu(d, stub));
    ASSIGN_OR_RETURN(auto stats, coord->Stats(false));
    if (stats.size() != 1) return Internal("no statistics from " + d.name);
    // The worker paces compute to CPU time / cpu, so its compute time
    // times `cpu` is the CPU the op itself took.
    double compute_s = 0;
    for (const auto& runs : stats[0].task_compute_ms) {
      for (float ms : runs) compute_s += ms * 1e-3;
    }
    compute_s *= d.cpu > 0 ? d.cpu : 1.0;
    return std::max(0.0,
                    (c1 - c0 - compute_s - idle_cpu_per_s * wall) / o.requests);
  };
  auto cpu = run();
  // Released on failure too, so that a served plan is current again.
  const Status released = coord->Release();
  if (!cpu.ok()) return cpu.status();
  RETURN_IF_ERROR(released);
  return *cpu;
}

}  // namespace

StatusOr<PathCpu> MeasurePathCpu(const DeviceSpec& d, const PathCpuOptions& o) {
  if (o.bytes < 1024 || o.requests < 1) {
    return InvalidArgument("path CPU needs at least 1 KiB and 1 request");
  }
  auto stub = rpc::Worker::NewStub(
      MakeChannel(d.address, kDefaultMaxMessageBytes, o.tls.get()));
  // What the worker burns doing nothing (gRPC's timers and pollers), so
  // that it is not counted as the messages' CPU.
  ASSIGN_OR_RETURN(const double i0, WorkerProcessCpu(d, stub.get()));
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSIGN_OR_RETURN(const double i1, WorkerProcessCpu(d, stub.get()));
  const double idle_rate =
      (i1 - i0) /
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  const int64_t n = o.bytes / 4;  // floats
  ASSIGN_OR_RETURN(Graph small, OneOp(ProbeOp::kRelu, {1, 16}));
  ASSIGN_OR_RETURN(Graph pool,
                   OneOp(ProbeOp::kGlobalAveragePool, {1, 1, n / 256, 256}));
  ASSIGN_OR_RETURN(Graph large, OneOp(ProbeOp::kRelu, {1, n}));
  ASSIGN_OR_RETURN(double s, TimeRequests(d, stub.get(), small, idle_rate, o));
  ASSIGN_OR_RETURN(double p, TimeRequests(d, stub.get(), pool, idle_rate, o));
  ASSIGN_OR_RETURN(double l, TimeRequests(d, stub.get(), large, idle_rate, o));
  const double bytes = double(n / 256 * 256) * 4;
  PathCpu r;
  r.idle_cpu_per_s = std::max(0.0, idle_rate);
  r.recv_per_byte_s = std::max(0.0, (p - s) / bytes);
  r.send_per_byte_s = std::max(0.0, (l - p) / bytes);
  return r;
}

}  // namespace shoal
