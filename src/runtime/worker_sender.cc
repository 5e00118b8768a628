#include "runtime/worker_sender.h"

#include <utility>

#include "cluster/board.h"
#include "runtime/board_clock.h"
#include "runtime/cpu_pacer.h"
#include "runtime/deployment_slots.h"
#include "runtime/relay_messages.h"
#include "runtime/wire.h"
#include "util/clock.h"

namespace shoal {

WorkerSender::WorkerSender(WorkerCore core, LinkShaper* shaper,
                           DialCoordinator dial)
    : core_(std::move(core)), shaper_(shaper), dial_(std::move(dial)) {}

void WorkerSender::Start() {
  for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { Loop(); });
}

void WorkerSender::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void WorkerSender::Queue(OutgoingMessage o) {
  std::lock_guard<std::mutex> lock(mu_);
  unsent_++;
  queue_.push_back(std::move(o));
  cv_.notify_one();
}

void WorkerSender::QueueHops(const std::shared_ptr<Deployment>& d,
                             const RequestMeta& meta,
                             const std::vector<RelayHop>& hops,
                             rpc::TensorMessage header, bool readdress_only,
                             Clock::time_point ready) {
  std::vector<std::pair<int, rpc::TensorMessage>> sends;
  if (readdress_only) {
    for (const RelayHop& h : hops) {
      sends.emplace_back(h.device, Readdress(header, h));
    }
  } else {
    const std::string bytes = std::move(*header.mutable_data());
    header.clear_data();
    sends = ChunkedSends(d->plan, header, hops, bytes);
  }
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [dev, msg] : sends) {
    OutgoingMessage o;
    o.dep = d;
    o.meta = meta;
    o.dst_device = dev;
    o.queued = now;
    o.ready = ready;
    o.msg = std::move(msg);
    unsent_++;
    queue_.push_back(std::move(o));
  }
  cv_.notify_all();
}

void WorkerSender::WaitUntilSent(Clock::time_point until) const {
  while (unsent_ > 0 && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::shared_ptr<rpc::Worker::Stub> WorkerSender::ReplyStub(
    const std::string& addr) {
  std::lock_guard<std::mutex> lock(stubs_mu_);
  auto& s = reply_stubs_[addr];
  if (!s.stub) s.stub = rpc::Worker::NewStub(dial_(addr));
  s.used = Clock::now();
  auto stub = s.stub;  // a sender may still hold a dropped one
  while (reply_stubs_.size() > kMaxReplyStubs) {
    auto oldest = reply_stubs_.begin();
    for (auto it = reply_stubs_.begin(); it != reply_stubs_.end(); ++it) {
      if (it->second.used < oldest->second.used) oldest = it;
    }
    reply_stubs_.erase(oldest);
  }
  return stub;
}

void WorkerSender::SendAbort(const RequestMeta& meta,
                             const std::string& error) {
  if (meta.reply_to.empty()) return;
  rpc::AbortMessage a;
  a.set_protocol(kProtocolVersion);
  a.set_request(meta.id);
  a.set_device(core_.opts->name);
  a.set_error(error);
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(2000));
  rpc::Ack ack;
  ReplyStub(meta.reply_to)->Abort(&ctx, a, &ack);
}

void WorkerSender::Loop() {
  while (true) {
    OutgoingMessage o;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      o = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      SendOne(o);
    } catch (const std::exception& e) {
      core_.fail(o.meta, WorkerError::kInternal,
                 "sending a tensor from " + core_.opts->name +
                     " failed on an unexpected condition: " + e.what());
    }
  }
}

void WorkerSender::SendOne(OutgoingMessage& o) {
  struct Sent {  // however this message ends
    std::atomic<int>& n;
    ~Sent() { n--; }
  } sent{unsent_};
  const auto taken = Clock::now();
  const Deployment& d = *o.dep;
  const std::string& name = core_.opts->name;
  const int64_t bytes = o.msg.data().size();
  const int to_device = o.dst_device < 0 ? d.plan.output_device : o.dst_device;
  const bool remote = to_device != d.device;
  // An emulated board's message takes the link from when its task finished
  // in board time (task_scheduler.h), however late this thread got to it;
  // then the board's CPU for it, as the simulator charges it after the
  // link. To a peer the message leaves at once, stamped with when that CPU
  // is done, and the peer counts its own CPU for it from then
  // (worker_tensors.cc): this host's time to carry it (gRPC, the loopback,
  // a busy host's wake-ups) is spent inside the board's, not added to it.
  // The coordinator counts no board time: what goes to it waits here.
  const WorkerOptions& w = *core_.opts;
  const bool on_board = w.board != nullptr;
  const auto from = on_board && o.ready != Clock::time_point{}
                        ? std::min(o.ready, taken)
                        : taken;
  const auto carried = remote ? shaper_->Transmit(bytes, from) : from;
  double board_s = 0;
  ClearBoardReady(&o.msg);
  if (on_board) {
    board_s =
        w.dilation *
        BoardMessageSeconds(ScaleRates(w.board->rates, w.board_speed), bytes);
    if (o.dst_device >= 0 && SteadyClockId() != 0) {
      StampBoardReady(carried + SteadySeconds(board_s), &o.msg);
    } else {
      PaceTo(carried, board_s);
      board_s = 0;
    }
  }
  const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(
                           o.meta.expiry - Clock::now())
                           .count();
  if (left <= 0) {
    core_.fail(o.meta, WorkerError::kRequestExpired,
               "request " + o.meta.id + " expired on " + name);
    return;
  }
  o.msg.set_timeout_ms(left);
  // Counted when the send starts, not when it returns: the receiver may
  // finish the request (and a client reset the statistics) before this
  // thread runs again, and the bytes would land in the next window.
  if (remote) core_.stats->With([&](WorkerStats& s) { s.AddSent(bytes); });
  std::shared_ptr<rpc::Worker::Stub> reply;
  if (o.dst_device < 0) reply = ReplyStub(o.meta.reply_to);
  rpc::Worker::Stub* stub =
      o.dst_device < 0 ? reply.get() : d.stubs[o.dst_device].get();
  (o.dst_device < 0 ? d.sent_to_coordinator : d.sent_to[o.dst_device])
      ->Increment(bytes);
  grpc::Status s = SendTensor(stub, o.msg, left);
  // This sender thread is the board's CPU for the message until then.
  if (board_s > 0) PaceTo(carried, board_s);
  if (!s.ok()) {
    const std::string who =
        o.dst_device < 0 ? "the coordinator (" + o.meta.reply_to + ")"
                         : "device " + d.plan.devices[o.dst_device].name +
                               " (" + d.peers[o.dst_device] + ")";
    core_.fail(
        o.meta, WorkerError::kSendFailed,
        who + " did not take a tensor from " + name + ": " + s.error_message());
    return;
  }
  if (core_.deployments->IsCurrent(o.dep.get())) {
    core_.stats->With([&](WorkerStats& st) {
      st.AddSpan(o.meta.seq, -1, o.msg.transfer(), o.queued, taken,
                 Clock::now());
    });
  }
}

}  // namespace shoal
