#include "cli/bench_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>

#include "cli/prediction_source.h"
#include "graph/cost.h"
#include "plan/broadcast.h"
#include "sim/simulator.h"
#include "util/stats.h"
#include "util/units.h"

namespace shoal {

void AddCoordinatorBytes(const Plan& p, int64_t seq, std::vector<int64_t>* sent,
                         std::vector<int64_t>* received) {
  // The coordinator sends the first hop of each broadcast of the input;
  // the workers that relay it count the rest (plan/broadcast.h).
  for (const WireHop& h : WireHops(p, seq)) {
    const Transfer& x = p.transfers[h.transfer];
    if (x.src.task == kModelInput && x.dst.task != kModelOutput &&
        h.from == p.input_device) {
      (*sent)[p.input_device] += WireHopBytes(p, h);
    }
  }
  for (const auto& x : p.transfers) {
    const int64_t b = p.WireBytes(x);
    if (x.dst.task == kModelOutput && x.src.task != kModelInput) {
      if (p.DeviceOf(x.src.task, seq) != p.output_device) {
        (*received)[p.output_device] += b;
      }
    }
  }
}

void SetDevicePower(const Plan& p, const Cluster& c, BenchReport* r) {
  auto map = MapPlanDevices(p, c);
  if (!map.ok()) return;
  for (size_t i = 0; i < r->devices.size() && i < map->size(); ++i) {
    r->devices[i].power = c.devices[(*map)[i]].power;
  }
}

namespace {

constexpr const char* kPi3PowerNote =
    "devices without a power block or a board in the cluster file count "
    "as a Raspberry Pi 3 (1.22 W idle, 3.95 W busy, links free)";

void PrintHistogram(const std::vector<double>& lat, std::ostream& out) {
  constexpr int kBins = 10, kWidth = 40;
  const double lo = *std::min_element(lat.begin(), lat.end());
  const double hi = *std::max_element(lat.begin(), lat.end());
  out << "latency histogram (ms):\n";
  // Latencies that print alike (a simulation of a plan with no queueing
  // gives one value) make one bar, not ten bins of the same label.
  if (hi - lo < 0.01) {
    out << "  " << std::setw(9) << std::fixed << std::setprecision(2) << lo
        << " - " << std::setw(9) << hi << " |" << std::string(kWidth, '#')
        << " " << lat.size() << "\n";
    return;
  }
  const double w = (hi - lo) / kBins;
  std::vector<int> bins(kBins);
  for (double v : lat) bins[std::min(kBins - 1, int((v - lo) / w))]++;
  const int most = *std::max_element(bins.begin(), bins.end());
  for (int b = 0; b < kBins; ++b) {
    out << "  " << std::setw(9) << std::fixed << std::setprecision(2)
        << lo + b * w << " - " << std::setw(9) << lo + (b + 1) * w << " |"
        << std::string(most ? bins[b] * kWidth / most : 0, '#') << " "
        << bins[b] << "\n";
  }
}

// Where this host fell behind the emulated boards, over every device, and
// by how much a request in all. A sum over the devices: what it added to a
// request's latency is at most that, less where a board that came in late
// was not on the request's critical path.
nlohmann::json BoardLateJson(const BenchReport& r) {
  int64_t tasks = 0, runs = 0, messages = 0, received = 0;
  double ms = 0;
  for (const auto& d : r.devices) {
    tasks += d.board_late_tasks;
    runs += d.task_runs;
    messages += d.board_late_messages;
    received += d.messages_received;
    ms += d.board_late_task_ms + d.board_late_message_ms;
  }
  const double n = std::max<size_t>(1, r.latency_ms.size());
  return {{"tasks", tasks},
          {"task_runs", runs},
          {"messages", messages},
          {"messages_received", received},
          {"ms_per_request", ms / n}};
}

}  // namespace

nlohmann::json BenchReportJson(const BenchReport& r) {
  const auto& lat = r.latency_ms;
  nlohmann::json j;
  j["plan"] = r.plan;
  j["cluster"] = r.cluster;
  j["strategy"] = r.strategy;
  j["model"] = r.model;
  if (r.predicted) {
    j["predicted"] = true;
    j["source"] = r.source;
  }
  j["requests"] = r.requests;
  j["concurrency"] = r.concurrency;
  j["dilation"] = r.dilation;
  j["failed"] = r.failed;
  if (r.not_sent > 0) j["not_sent"] = r.not_sent;
  j["latency_ms"] = {{"min", Quantile(lat, 0)},
                     {"median", Quantile(lat, 0.5)},
                     {"p95", Quantile(lat, 0.95)},
                     {"p99", Quantile(lat, 0.99)},
                     {"max", Quantile(lat, 1)}};
  j["throughput_rps"] = r.wall_s > 0 ? lat.size() / r.wall_s : 0.0;
  int64_t total = 0;
  double energy = 0;
  bool defaults = false;
  j["devices"] = nlohmann::json::array();
  for (const auto& d : r.devices) {
    total += d.bytes_sent;
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : d.tasks) {
      tasks.push_back({{"task", t.task},
                       {"name", t.name},
                       {"runs", t.runs},
                       {"compute_ms_median", t.compute_ms_median}});
    }
    j["devices"].push_back({{"name", d.name},
                            {"compute_ms_median", d.compute_ms_median},
                            {"busy_ms", d.busy_ms},
                            {"idle_ms", d.idle_ms},
                            {"wait_ms_total", d.wait_ms_total},
                            {"task_runs", d.task_runs},
                            {"bytes_sent", d.bytes_sent},
                            {"bytes_received", d.bytes_received},
                            {"queue_histogram", d.queue_histogram},
                            {"requests_failed", d.requests_failed},
                            {"tasks", std::move(tasks)}});
    if (!r.predicted) {
      j["devices"].back()["board_late"] = {
          {"tasks", d.board_late_tasks},
          {"task_ms", d.board_late_task_ms},
          {"messages", d.board_late_messages},
          {"message_ms", d.board_late_message_ms},
          {"messages_received", d.messages_received}};
    }
    if (!d.error.empty()) {
      j["devices"].back()["error"] = d.error;
      continue;
    }
    const DeviceEnergy e =
        EnergyPerInference(d.power, r.wall_s, d.busy_ms / 1e3, d.bytes_sent,
                           d.bytes_received, int64_t(lat.size()));
    j["devices"].back()["energy_j_per_inference"] = {
        {"idle", e.idle_j},
        {"compute", e.compute_j},
        {"network", e.network_j},
        {"total", e.total()},
        {"power", d.power.given             ? "cluster file"
                  : !d.power.source.empty() ? d.power.source
                                            : "Raspberry Pi 3 figures"}};
    energy += e.total();
    defaults = defaults || (!d.power.given && d.power.source.empty());
  }
  j["bytes_total"] = total;
  if (!r.predicted) j["board_late"] = BoardLateJson(r);
  // Every device's energy per inference: the LCP paper's Fig. 13 measure.
  j["energy_j_per_inference"] = energy;
  if (defaults) j["energy_note"] = kPi3PowerNote;
  j["bytes_per_request"] =
      lat.empty() ? 0.0 : total / static_cast<double>(lat.size());
  if (r.medium_bps > 0) {
    j["medium"] = {
        {"bandwidth_bps", r.medium_bps},
        {"airtime_s_per_request",
         lat.empty() ? 0.0 : r.medium_busy_s / double(lat.size())},
        {"busy_fraction", r.wall_s > 0 ? r.medium_busy_s / r.wall_s : 0.0}};
  }
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  return j;
}

void PrintBenchReport(const BenchReport& r, std::ostream& out) {
  const nlohmann::json j = BenchReportJson(r);
  const auto flags = out.flags();
  out << std::fixed << std::setprecision(2);
  out << (r.predicted ? "simulate " : "bench ") << r.plan << " (" << r.strategy
      << ", " << r.devices.size() << " devices of " << r.cluster
      << "): " << r.latency_ms.size() << "/" << r.requests << " requests ok, "
      << r.concurrency << " in flight, " << r.wall_s << " s"
      << (r.dilation != 1
              ? " of board time (the emulated cluster ran " +
                    std::to_string(r.dilation).substr(0, 4) + "x slower)"
              : "")
      << (r.predicted ? " (PREDICTED from " + r.source + ")" : "") << "\n";
  if (const char* note = r.predicted ? SpecNoteOf(r.source) : nullptr) {
    out << note;
  }
  const auto& l = j["latency_ms"];
  out << "latency ms: min " << l["min"].get<double>() << ", median "
      << l["median"].get<double>() << ", p95 " << l["p95"].get<double>()
      << ", p99 " << l["p99"].get<double>() << ", max "
      << l["max"].get<double>() << "\n";
  out << "throughput " << j["throughput_rps"].get<double>() << " requests/s; "
      << HumanBytes(j["bytes_total"].get<int64_t>()) << " on the wire ("
      << HumanBytes(std::llround(j["bytes_per_request"].get<double>()))
      << " per request)\n";
  if (j.contains("medium")) {
    const auto& m = j["medium"];
    out << "shared medium " << HumanBitRate(m["bandwidth_bps"].get<double>())
        << ": " << HumanMs(m["airtime_s_per_request"].get<double>() * 1e3)
        << " of airtime per request, busy "
        << Percent(m["busy_fraction"].get<double>()) << " of the run\n";
  }
  if (!r.latency_ms.empty()) PrintHistogram(r.latency_ms, out);
  out << "energy " << std::setprecision(3)
      << j["energy_j_per_inference"].get<double>()
      << " J per inference, all devices";
  if (j.contains("energy_note")) {
    out << " (" << j["energy_note"].get<std::string>() << ")";
  }
  out << "\n" << std::setprecision(2);
  out << "device        compute ms/req    idle ms           sent    "
         "received     J/inf  queue occupancy (0,1,2,..)\n";
  for (const auto& d : j["devices"]) {
    std::string q;
    const auto& h = d["queue_histogram"];
    size_t last = 0;
    for (size_t i = 0; i < h.size(); ++i) {
      if (h[i].get<int64_t>() > 0) last = i;
    }
    for (size_t i = 0; i <= last && i < h.size(); ++i) {
      q += (i ? "," : "") + std::to_string(h[i].get<int64_t>());
    }
    if (d.contains("error")) {
      out << "  " << std::left << std::setw(12) << d["name"].get<std::string>()
          << std::right << "  no statistics: " << d["error"].get<std::string>()
          << "\n";
      continue;
    }
    out << "  " << std::left << std::setw(12) << d["name"].get<std::string>()
        << std::right << std::setw(14) << d["compute_ms_median"].get<double>()
        << std::setw(11) << d["idle_ms"].get<double>() << std::setw(15)
        << HumanBytes(d["bytes_sent"].get<int64_t>()) << std::setw(12)
        << HumanBytes(d["bytes_received"].get<int64_t>()) << std::setw(10)
        << std::setprecision(3)
        << d["energy_j_per_inference"]["total"].get<double>() << "  " << q
        << std::setprecision(2) << "\n";
    if (!r.print_tasks) continue;
    for (const auto& t : d["tasks"]) {
      out << "    " << std::setw(10) << std::right
          << t["compute_ms_median"].get<double>() << " ms  " << std::setw(4)
          << t["task"].get<int>() << " " << t["name"].get<std::string>() << " ("
          << t["runs"].get<int64_t>() << " runs)\n";
    }
  }
  if (j.contains("board_late")) {
    // Emulated boards whose time this host could not keep: the latencies
    // above include what it added.
    const auto& b = j["board_late"];
    const int64_t tasks = b["tasks"].get<int64_t>();
    const int64_t messages = b["messages"].get<int64_t>();
    if (tasks + messages > 0) {
      out << "host behind the boards: " << tasks << " of "
          << b["task_runs"].get<int64_t>() << " tasks ended late and "
          << messages << " of " << b["messages_received"].get<int64_t>()
          << " messages came in late, by " << b["ms_per_request"].get<double>()
          << " ms of board time a request summed over the devices (at most "
             "that added to a latency; a larger `cluster up --dilation` "
             "gives the host more time)\n";
    }
  }
  if (r.failed) {
    out << r.failed << " requests failed; first: " << r.first_error << "\n";
  }
  if (r.not_sent > 0) {
    out << "stopped at the first failure: " << r.not_sent << " of "
        << r.requests << " requests not sent\n";
  }
  out.flags(flags);
}

}  // namespace shoal
