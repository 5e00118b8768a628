// One request: the input cut into the messages its tasks read, sent
// through the input device's link, and the output gathered from the
// workers' replies.
#include <atomic>
#include <mutex>
#include <thread>

#include "plan/broadcast.h"
#include "plan/dataflow.h"
#include "runtime/board_clock.h"
#include "runtime/coordinator_impl.h"
#include "runtime/link_shaper.h"
#include "runtime/pixel_codec.h"
#include "runtime/relay_messages.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"
#include "util/clock.h"

namespace shoal {

using Clock = std::chrono::steady_clock;

// As the worker's senders (runtime/worker.cc).
constexpr size_t kInputSenders = 8;

// Sends request `seq`'s input messages, (device, message) in order: those
// to the input device itself one by one (they cross no link), and beside
// them the others through the input device's link from several threads, so
// that each waits out the link's latency beside the others, as a worker's
// senders do; the chunks of a broadcast follow each other closely. Each is
// stamped with when the link was through with it, on this host's clock: an
// emulated board there counts its CPU for the message from then
// (worker_tensors.cc), not from when gRPC got it there.
Status Coordinator::Impl::SendInputs(
    const Plan& p, std::vector<std::pair<int, rpc::TensorMessage>>* sends,
    std::chrono::steady_clock::time_point expiry, int64_t seq) {
  auto send_one = [&](std::pair<int, rpc::TensorMessage>& s) -> Status {
    const int d = s.first;
    const auto through =
        d != p.input_device
            ? input_link->Transmit(s.second.data().size(), Clock::now())
            : Clock::now();
    StampBoardReady(through, &s.second);
    const int64_t left = std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::milliseconds>(
               expiry - std::chrono::steady_clock::now())
               .count());
    s.second.set_timeout_ms(left);
    grpc::Status g = SendTensor(stubs[d].get(), s.second, left);
    if (g.ok()) return Status::Ok();
    return FromGrpc(g, "request " + std::to_string(seq) + ": " + DeviceName(d) +
                           " did not take the input");
  };
  size_t first_remote = 0;
  while (first_remote < sends->size() &&
         (*sends)[first_remote].first == p.input_device) {
    ++first_remote;
  }
  const size_t n = sends->size() - first_remote;
  auto send_local = [&]() -> Status {
    for (size_t i = 0; i < first_remote; ++i) {
      RETURN_IF_ERROR(send_one((*sends)[i]));
    }
    return Status::Ok();
  };
  if (n == 0) return send_local();
  std::atomic<size_t> next{first_remote};
  std::mutex err_mu;
  Status first_error;
  auto loop = [&] {
    for (size_t i = next++; i < sends->size(); i = next++) {
      {
        std::lock_guard<std::mutex> lock(err_mu);
        if (!first_error.ok()) return;
      }
      Status s = send_one((*sends)[i]);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(err_mu);
        if (first_error.ok()) first_error = s;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < std::min<size_t>(n, kInputSenders); ++t) {
    threads.emplace_back(loop);
  }
  const Status local = send_local();
  for (auto& t : threads) t.join();
  return local.ok() ? first_error : local;
}

namespace {

// The part as pixels, where the options say inputs are images and every
// value of it is one; false: send it as float32.
bool EncodeInputPart(const CoordinatorOptions& o, const Region& r,
                     const Tensor& part, rpc::TensorMessage* msg) {
  if (!o.pixels || r.begin.size() < 2) return false;
  const ImageNormalization& n = *o.pixels;
  const int64_t c0 = r.begin[1], c1 = r.end[1];
  if (c0 < 0 || c1 > static_cast<int64_t>(n.mean.size()) ||
      c1 > static_cast<int64_t>(n.std.size())) {
    return false;
  }
  std::vector<float> mean(n.mean.begin() + c0, n.mean.begin() + c1);
  std::vector<float> std(n.std.begin() + c0, n.std.begin() + c1);
  if (!EncodePixels(part, mean, std, msg->mutable_data())) {
    msg->clear_data();
    return false;
  }
  msg->set_encoding(rpc::TensorMessage::PIXELS);
  for (float v : mean) msg->add_pixel_mean(v);
  for (float v : std) msg->add_pixel_std(v);
  return true;
}

// Request `seq`'s entry, waiting for every part of the output.
std::shared_ptr<PendingRequest> NewPending(const Coordinator::Impl& m,
                                           int64_t seq) {
  const Plan& p = m.plan;
  auto pend = std::make_shared<PendingRequest>();
  pend->output = Tensor(p.output_shape);
  pend->parts_left = m.output_parts;
  pend->uses.assign(m.devs.size(), false);
  for (const auto& t : p.tasks) {
    const int dv = p.DeviceOf(t.id, seq);
    if (dv >= 0 && dv < static_cast<int>(m.devs.size())) pend->uses[dv] = true;
  }
  return pend;
}

void Unregister(Coordinator::Impl& m, const std::string& id) {
  std::lock_guard<std::mutex> lock(m.mu);
  m.pending.erase(id);
}

// A message of request `id`'s input `part`, without its transfer.
rpc::TensorMessage InputMessage(const Coordinator::Impl& m,
                                const std::string& id, int64_t seq,
                                const std::string& deployment,
                                const Region& region, const Tensor& part) {
  rpc::TensorMessage msg;
  msg.set_protocol(kProtocolVersion);
  msg.set_request(id);
  msg.set_seq(seq);
  msg.set_reply_to(m.reply_to);
  msg.set_deployment(deployment);
  for (int64_t v : part.shape) msg.add_shape(v);
  if (!EncodeInputPart(m.opts, region, part, &msg)) {
    EncodeTensor(part, m.plan.wire, &msg);
  }
  return msg;
}

// The messages of request `id`'s input, (device, message) in the order
// they go (plan/dataflow.h RouteInput): one per part sent on its own, the
// input device's first, where a part that is also the model's output is
// copied into `pend` instead; then each broadcast's chunks along its relay
// tree. A part that cannot be cut from `input` fails the request.
Status InputSends(Coordinator::Impl& m, const Tensor& input,
                  const std::string& id, int64_t seq, PendingRequest* pend,
                  std::vector<std::pair<int, rpc::TensorMessage>>* sends) {
  const Plan& p = m.plan;
  const OutputRoute route = RouteInput(p, m.flow.inputs, seq);
  for (const OutputRoute::Direct& dx : route.direct) {
    const int xi = dx.transfer;
    const Transfer& x = p.transfers[xi];
    const int d = dx.to;
    auto part = ExtractRegion(input, x.src.region);
    if (!part.ok()) {
      Unregister(m, id);
      return part.status();
    }
    if (d < 0) {  // the plan's input is its output: nothing to run
      Status s;
      {
        std::lock_guard<std::mutex> lock(m.mu);
        s = CopyRegion(*part, Region::Full(part->shape), &pend->output,
                       x.dst.region, x.merge);
        if (s.ok()) pend->parts_left--;
      }
      if (!s.ok()) {
        Unregister(m, id);
        return s;
      }
      continue;
    }
    rpc::TensorMessage msg =
        InputMessage(m, id, seq, m.deployment[d], x.src.region, *part);
    msg.set_transfer(xi);
    sends->emplace_back(d, std::move(msg));
  }
  for (const auto& g : route.broadcasts) {
    const Transfer& x = p.transfers[g.front()];
    auto part = ExtractRegion(input, x.src.region);
    if (!part.ok()) {
      Unregister(m, id);
      return part.status();
    }
    rpc::TensorMessage header = InputMessage(
        m, id, seq, m.deployment[p.input_device], x.src.region, *part);
    const std::string bytes = std::move(*header.mutable_data());
    header.clear_data();
    for (auto& s : ChunkedSends(p, header,
                                SourceHops(p, g, p.input_device, seq), bytes)) {
      sends->push_back(std::move(s));
    }
  }
  return Status::Ok();
}

// Waits until request `id` has its whole output, fails, or reaches
// `expiry`, and unregisters it; a timeout says which devices do not answer.
Status AwaitOutput(Coordinator::Impl& m, const std::string& id,
                   const PendingRequest& pend, Clock::time_point expiry,
                   int64_t seq, int64_t timeout_ms) {
  Status result;
  {
    std::unique_lock<std::mutex> lock(m.mu);
    const bool done =
        m.cv.wait_until(lock, expiry, [&] { return pend.done(); });
    m.pending.erase(id);
    if (!pend.error.ok()) {
      result = pend.error.WithContext("request " + std::to_string(seq));
    } else if (!done) {
      result = Status(Code::kDeadlineExceeded,
                      "request " + std::to_string(seq) + " timed out after " +
                          std::to_string(timeout_ms) + " ms");
    }
  }
  if (result.code() == Code::kDeadlineExceeded) {
    const std::string down = m.Unreachable();
    return Status(result.code(),
                  result.message() +
                      (down.empty() ? ": every device answers health checks; "
                                      "a device may be too slow for the "
                                      "deadline (raise --timeout)"
                                    : ": " + down));
  }
  return result;
}

}  // namespace

Status Coordinator::Run(const Tensor& input, Tensor* output, RunStats* stats,
                        int64_t seq, int64_t timeout_ms) {
  Impl& m = *impl_;
  const Plan& p = m.plan;
  if (timeout_ms <= 0) timeout_ms = m.opts.timeout_ms;
  // Deadlines are in board time (AgreeOnDilation).
  timeout_ms = static_cast<int64_t>(double(timeout_ms) * m.dilation);
  if (input.shape != p.input_shape) {
    return InvalidArgument("input has shape " + ShapeToString(input.shape) +
                           " but the plan's model expects " +
                           ShapeToString(p.input_shape));
  }
  for (const auto& id : m.deployment) {
    if (id.empty()) return FailedPrecondition("the plan is not deployed");
  }
  const std::string id = m.nonce + "-" + std::to_string(m.counter++);
  auto pend = NewPending(m, seq);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (!m.cancelled.ok()) return m.cancelled;
    m.pending[id] = pend;
  }
  const auto t0 = Clock::now();
  const auto expiry = t0 + std::chrono::milliseconds(timeout_ms);
  std::vector<std::pair<int, rpc::TensorMessage>> sends;
  RETURN_IF_ERROR(InputSends(m, input, id, seq, pend.get(), &sends));
  if (Status s = m.SendInputs(p, &sends, expiry, seq); !s.ok()) {
    Unregister(m, id);
    return s;
  }
  {
    std::lock_guard<std::mutex> lock(m.mu);
    pend->awaiting = true;
  }
  RETURN_IF_ERROR(AwaitOutput(m, id, *pend, expiry, seq, timeout_ms));
  const double latency = MsSince(t0) / m.dilation;
  *output = std::move(pend->output);
  if (stats != nullptr) {
    *stats = CountCommunication(p, seq);
    stats->latency_ms = latency;
  }
  return Status::Ok();
}

}  // namespace shoal
