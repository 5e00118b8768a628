// What `shoal bench` (measured) and `shoal simulate` (predicted) print: one
// report, one JSON shape and one table, so the two sit side by side.
#ifndef SHOAL_CLI_BENCH_REPORT_H_
#define SHOAL_CLI_BENCH_REPORT_H_

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/power.h"
#include "plan/plan.h"

namespace shoal {

// One task's runs on one device (a replicated task has one per replica).
struct BenchTaskReport {
  int task = 0;
  std::string name;
  int64_t runs = 0;
  double compute_ms_median = 0;
};

struct BenchDeviceReport {
  std::string name;
  std::vector<BenchTaskReport> tasks;  // those that ran here, by task id
  double compute_ms_median = 0;        // sum over its tasks of their median
  double busy_ms = 0, idle_ms = 0, wait_ms_total = 0;
  int64_t task_runs = 0;
  int64_t bytes_sent = 0, bytes_received = 0;
  std::vector<int64_t> queue_histogram;
  int64_t requests_failed = 0;
  // An emulated board: its tasks and the messages it received that this
  // host finished after the board's time for them (DeviceStats), and by how
  // much in all, ms of board time.
  int64_t messages_received = 0;
  int64_t board_late_tasks = 0, board_late_messages = 0;
  double board_late_task_ms = 0, board_late_message_ms = 0;
  std::string error;  // no statistics: why (a device lost mid-bench)
  // Its cluster device's power figures (cluster/power.h): with busy_ms,
  // bytes and the wall time, its energy per inference.
  PowerSpec power = Pi3Power();
};

struct BenchReport {
  std::string plan, cluster, strategy, model;
  int requests = 0, concurrency = 0, failed = 0;
  int not_sent = 0;                // bench stops at the first failure
  std::vector<double> latency_ms;  // of the requests that succeeded
  double wall_s = 0;
  // An emulated cluster's time dilation (Coordinator::dilation): the times
  // above and below are board time, the run took this many times longer.
  double dilation = 1;
  std::vector<BenchDeviceReport> devices;
  std::string first_error;
  // Set by `shoal simulate`: figures are predicted, from `source`.
  bool predicted = false;
  std::string source;
  bool print_tasks = false;  // the table lists each task under its device
  // `shoal simulate` on a shared medium: its rate and the seconds messages
  // held it over the run; 0: none.
  double medium_bps = 0;
  double medium_busy_s = 0;
};

// What the coordinator itself moves for request `seq`: the model input it
// sends for the input device (over that device's link) and the model output
// parts it receives for the output device. Workers count everything else,
// so together they equal the plan's counted bytes (CountCommunication).
void AddCoordinatorBytes(const Plan& p, int64_t seq, std::vector<int64_t>* sent,
                         std::vector<int64_t>* received);

// Each report device (a plan device, in order) gets the power figures of
// the cluster device that serves it; unmatched ones keep the Pi 3's.
void SetDevicePower(const Plan& p, const Cluster& c, BenchReport* r);

nlohmann::json BenchReportJson(const BenchReport& r);
void PrintBenchReport(const BenchReport& r, std::ostream& out);

}  // namespace shoal

#endif  // SHOAL_CLI_BENCH_REPORT_H_
