#include "plan/trace.h"

#include <algorithm>
#include <fstream>
#include <limits>

#include "graph/cost.h"

namespace shoal {

using nlohmann::json;

namespace {

constexpr int kComputeLane = 1, kSendLane = 2;

json Meta(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"},
          {"name", what},
          {"pid", pid},
          {"tid", tid},
          {"args", {{"name", name}}}};
}

std::string Where(const Plan& p, int device) {
  if (device == -1) return "coordinator";
  return device >= 0 && device < static_cast<int>(p.devices.size())
             ? p.devices[device].name
             : "device " + std::to_string(device);
}

}  // namespace

int64_t SteadyNs(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             t.time_since_epoch())
      .count();
}

json ChromeTrace(const Plan& p, const std::vector<TraceSpan>& spans) {
  double t0 = std::numeric_limits<double>::infinity();
  for (const auto& s : spans) t0 = std::min(t0, std::min(s.ready_s, s.start_s));
  auto us = [&](double t) { return (t - t0) * 1e6; };
  json ev = json::array();
  // pid 0 is the coordinator, pid d + 1 plan device d.
  ev.push_back(Meta("process_name", 0, 0, "coordinator"));
  ev.push_back(Meta("thread_name", 0, 0, "requests"));
  for (size_t d = 0; d < p.devices.size(); ++d) {
    const int pid = static_cast<int>(d) + 1;
    ev.push_back(Meta("process_name", pid, 0, p.devices[d].name));
    ev.push_back(Meta("thread_name", pid, kComputeLane, "compute"));
    ev.push_back(Meta("thread_name", pid, kSendLane, "send"));
  }
  const int nt = static_cast<int>(p.tasks.size());
  const int nx = static_cast<int>(p.transfers.size());
  for (const auto& s : spans) {
    json e = {{"ph", "X"},
              {"pid", s.device + 1},
              {"ts", us(s.start_s)},
              {"dur", std::max(0.0, s.end_s - s.start_s) * 1e6}};
    json args = {{"request", s.seq}};
    switch (s.kind) {
      case TraceSpan::Kind::kRequest:
        e["tid"] = 0;
        e["name"] = "request " + std::to_string(s.seq);
        break;
      case TraceSpan::Kind::kTask:
        e["tid"] = kComputeLane;
        e["name"] = s.item >= 0 && s.item < nt
                        ? p.tasks[s.item].name
                        : "task " + std::to_string(s.item);
        args["queued_ms"] = (s.start_s - s.ready_s) * 1e3;
        break;
      case TraceSpan::Kind::kSend: {
        e["tid"] = kSendLane;
        std::string to = "?";
        if (s.item >= 0 && s.item < nx) {
          const Transfer& x = p.transfers[s.item];
          to = x.dst.task == kModelOutput
                   ? "coordinator"
                   : Where(p, p.DeviceOf(x.dst.task, s.seq));
          args["bytes"] = p.WireBytes(x);
        }
        e["name"] = "to " + to;
        args["transfer"] = s.item;
        args["queued_ms"] = (s.start_s - s.ready_s) * 1e3;
        break;
      }
    }
    e["args"] = std::move(args);
    ev.push_back(std::move(e));
  }
  return {{"traceEvents", std::move(ev)}, {"displayTimeUnit", "ms"}};
}

Status WriteTrace(const std::string& path, const Plan& p,
                  const std::vector<TraceSpan>& spans) {
  std::ofstream f(path);
  if (!f) return InvalidArgument("cannot write trace file " + path);
  f << ChromeTrace(p, spans).dump() << "\n";
  if (!f) return InvalidArgument("error writing trace file " + path);
  return Status::Ok();
}

}  // namespace shoal
