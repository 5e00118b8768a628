// The workers' statistics and timelines, in board time and on the
// coordinator's clock.
#include <cstdlib>
#include <mutex>

#include "runtime/coordinator_impl.h"
#include "runtime/wire.h"
#include "util/clock.h"

namespace shoal {

namespace {

// A worker's steady clock minus ours, in ns, NTP-style from the quickest of
// a few Stats round trips: a worker under a CPU quota may answer one late.
StatusOr<int64_t> ClockOffsetNs(rpc::Worker::Stub* stub,
                                const std::string& who) {
  int64_t best_rtt = INT64_MAX, offset = 0;
  for (int i = 0; i < 5; ++i) {
    rpc::StatsRequest req;
    req.set_protocol(kProtocolVersion);
    rpc::StatsReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(5000));
    const int64_t t0 = SteadyNs();
    RETURN_IF_ERROR(FromGrpc(stub->Stats(&ctx, req, &rep), who));
    const int64_t t1 = SteadyNs();
    if (t1 - t0 < best_rtt) {
      best_rtt = t1 - t0;
      offset = rep.now_ns() - (t0 + t1) / 2;
    }
  }
  // The offset is known to within half the round trip. Where zero is in
  // that range the clocks are taken to be one (workers on this host:
  // steady clocks of different machines differ by their uptimes), so that
  // a loaded host's slow round trips add no error.
  return std::abs(offset) <= best_rtt / 2 ? 0 : offset;
}

}  // namespace

StatusOr<std::vector<DeviceStats>> Coordinator::Stats(bool reset, bool timeline,
                                                      bool skip_lost) {
  Impl& m = *impl_;
  std::vector<DeviceStats> out;
  for (size_t d = 0; d < m.devs.size(); ++d) {
    DeviceStats s;
    s.name = m.devs[d].name;
    // A device that does not answer fails the call, or with `skip_lost`
    // is listed with the error (a report after a device was lost).
    auto lost = [&](const Status& e) -> Status {
      if (!skip_lost) return e;
      s.error = e.message();
      out.push_back(std::move(s));
      return Status::Ok();
    };
    int64_t offset_ns = 0;
    if (timeline) {
      auto off = ClockOffsetNs(m.stubs[d].get(), m.DeviceName(d));
      if (!off.ok()) {
        RETURN_IF_ERROR(lost(off.status()));
        continue;
      }
      offset_ns = *off;
    }
    rpc::StatsRequest req;
    req.set_protocol(kProtocolVersion);
    req.set_reset(reset);
    req.set_timeline(timeline);
    rpc::StatsReply rep;
    grpc::ClientContext ctx;
    bool was_silent = false;
    {
      std::lock_guard<std::mutex> lock(m.mu);
      was_silent = m.silent[d];
    }
    // After a failure, a device the probe found silent gets half a
    // second: thawed, it answers in that; still frozen, the report is
    // not held up for long.
    ctx.set_deadline(DeadlineIn(!skip_lost ? 5000 : (was_silent ? 500 : 2000)));
    if (Status e =
            FromGrpc(m.stubs[d]->Stats(&ctx, req, &rep), m.DeviceName(d));
        !e.ok()) {
      RETURN_IF_ERROR(lost(e));
      continue;
    }
    s.task_compute_ms.resize(m.plan.tasks.size());
    for (const auto& t : rep.tasks()) {
      if (t.task() < 0 || t.task() >= static_cast<int>(m.plan.tasks.size())) {
        continue;
      }
      s.task_compute_ms[t.task()].assign(t.compute_ms().begin(),
                                         t.compute_ms().end());
      for (float& ms : s.task_compute_ms[t.task()]) ms /= m.dilation;
      s.wait_ms += t.wait_ms_total() / m.dilation;
    }
    s.bytes_sent = rep.bytes_sent();
    s.bytes_received = rep.bytes_received();
    s.queue_histogram.assign(rep.queue_histogram().begin(),
                             rep.queue_histogram().end());
    s.busy_ms = rep.busy_ms() / m.dilation;
    s.elapsed_ms = rep.elapsed_ms() / m.dilation;
    s.requests_failed = rep.requests_failed();
    s.messages_received = rep.messages_received();
    s.board_late_tasks = rep.board_late_tasks();
    s.board_late_task_ms = rep.board_late_task_ms() / m.dilation;
    s.board_late_messages = rep.board_late_messages();
    s.board_late_message_ms = rep.board_late_message_ms() / m.dilation;
    // Board time on a dilated cluster: every instant divided by K, as the
    // callers' own clock readings are (Coordinator::dilation).
    auto secs = [&](int64_t ns) {
      return (ns - offset_ns) * 1e-9 / m.dilation;
    };
    for (const auto& x : rep.timeline()) {
      TraceSpan t;
      t.kind = x.task() >= 0 ? TraceSpan::Kind::kTask : TraceSpan::Kind::kSend;
      t.device = static_cast<int>(d);
      t.seq = x.seq();
      t.item = x.task() >= 0 ? x.task() : x.transfer();
      t.ready_s = secs(x.ready_ns());
      t.start_s = secs(x.start_ns());
      t.end_s = secs(x.end_ns());
      s.timeline.push_back(t);
    }
    s.timeline_dropped = rep.timeline_dropped();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace shoal
