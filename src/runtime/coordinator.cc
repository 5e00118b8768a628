#include "runtime/coordinator.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "graph/quantization.h"
#include "plan/broadcast.h"
#include "plan/dataflow.h"
#include "plan/plan_cost.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "plan/task_weights.h"
#include "runtime/connection_watch.h"
#include "runtime/device_probe.h"
#include "runtime/link_shaper.h"
#include "runtime/peer_auth.h"
#include "runtime/pixel_codec.h"
#include "runtime/relay_messages.h"
#include "runtime/rpc_guard.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"
#include "util/clock.h"
#include "util/net_address.h"
#include "util/parallel_for.h"
#include "util/units.h"

namespace shoal {

namespace {

using Clock = std::chrono::steady_clock;

// A request waiting for its output.
struct Pending {
  Tensor output;
  int parts_left = 0;
  Status error;
  std::vector<bool> uses;  // per plan device: runs a task of this request
  // Its input is sent: from now on its devices are probed (DeviceProbe),
  // not while a probe could queue behind the input's bytes on the link.
  bool awaiting = false;
  bool done() const { return parts_left == 0 || !error.ok(); }
};

}  // namespace

// As the worker's senders (runtime/worker.cc).
constexpr size_t kInputSenders = 8;
// Devices deployed to at once, at most: a cluster of any size is served by
// this many threads, each uploading to the next device when it is done.
constexpr size_t kDeployThreads = 32;

struct Coordinator::Impl final : public rpc::Worker::Service {
  Plan plan;
  PlanFlow flow;  // the plan's transfers by task, indexed once
  std::string plan_json;
  std::vector<DeviceSpec> devs;  // per plan device
  CoordinatorOptions opts;
  int64_t max_msg = kDefaultMaxMessageBytes;
  std::vector<std::unique_ptr<rpc::Worker::Stub>> stubs;
  std::vector<std::string> deployment;  // per device: the plan_id
  // Per device, the id its Health reports while it holds our deployment.
  std::vector<std::string> deploy_ids;
  std::unique_ptr<LinkShaper> input_link;
  // Per device, the time dilation its worker reports (Health); `dilation`
  // the cluster's, once every deployed device agrees (DeployTo). Atomic:
  // serve redeploys while requests read it.
  std::vector<double> dilations;
  std::atomic<double> dilation{1.0};
  std::unique_ptr<grpc::Server> server;
  std::string reply_to;
  std::string nonce;
  std::atomic<int64_t> counter{0};
  int output_parts = 0;

  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::shared_ptr<Pending>> pending;
  Status cancelled;          // set by Cancel(): every request fails with it
  std::vector<char> silent;  // per device: the probe found it silent once
  // Last: destroyed first, so that their threads never see the rest gone.
  std::unique_ptr<ConnectionWatch> watch;
  std::unique_ptr<DeviceProbe> probe;

  // Per device: whether a request whose input is sent runs a task there
  // (what the probe asks).
  std::vector<bool> DevicesInUse() {
    std::vector<bool> in_use(devs.size(), false);
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [id, p] : pending) {
      if (!p->awaiting || !p->error.ok()) continue;
      for (size_t d = 0; d < in_use.size(); ++d) {
        if (p->uses[d]) in_use[d] = true;
      }
    }
    return in_use;
  }

  // The probe found device `d` silent: the requests that run a task there
  // fail now. Not asked again whether it holds the deployment, as a
  // dropped connection is: it has just not answered.
  void DeviceSilent(int d, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    silent[d] = 1;
    bool any = false;
    for (auto& [id, p] : pending) {
      if (!p->error.ok() || !p->uses[d]) continue;
      p->error = Unavailable(DeviceName(d) + " was lost: " + what);
      any = true;
    }
    if (any) cv.notify_all();
  }

  std::string DeviceName(int d) const {
    return "device " + devs[d].name + " (" + devs[d].address + ")";
  }

  // Sends request `seq`'s input messages, (device, message) in order: those
  // to the input device itself first, one by one (they cross no link), then
  // the others through the input device's link from several threads, so
  // that each waits out the link's latency beside the others, as a worker's
  // senders do; the chunks of a broadcast follow each other closely.
  Status SendInputs(const Plan& p,
                    std::vector<std::pair<int, rpc::TensorMessage>>* sends,
                    std::chrono::steady_clock::time_point expiry, int64_t seq) {
    auto send_one = [&](std::pair<int, rpc::TensorMessage>& s) -> Status {
      const int d = s.first;
      if (d != p.input_device) input_link->Transmit(s.second.data().size());
      const int64_t left = std::max<int64_t>(
          1, std::chrono::duration_cast<std::chrono::milliseconds>(
                 expiry - std::chrono::steady_clock::now())
                 .count());
      s.second.set_timeout_ms(left);
      grpc::Status g = SendTensor(stubs[d].get(), s.second, left);
      if (g.ok()) return Status::Ok();
      return FromGrpc(g, "request " + std::to_string(seq) + ": " +
                             DeviceName(d) + " did not take the input");
    };
    size_t first_remote = 0;
    for (; first_remote < sends->size() &&
           (*sends)[first_remote].first == p.input_device;
         ++first_remote) {
      RETURN_IF_ERROR(send_one((*sends)[first_remote]));
    }
    const size_t n = sends->size() - first_remote;
    if (n <= 1) {
      return n == 1 ? send_one(sends->back()) : Status::Ok();
    }
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
    for (auto& t : threads) t.join();
    return first_error;
  }

  const TlsIdentity* tls() const { return opts.tls.get(); }

  // The connection watch lost device `d`: the requests that run a task
  // there fail now, not at their deadline. Unless the worker itself closed
  // the connection and still holds the deployment: a worker closes
  // connections idle for a while, older than a limit, or under memory
  // pressure (runtime/wire.h, ServerLimits), and its calls went on or
  // connect again.
  void DeviceLost(int d, const std::string& what) {
    auto needed = [&] {
      for (auto& [id, p] : pending) {
        if (p->error.ok() && p->uses[d]) return true;
      }
      return false;
    };
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!needed()) return;
    }
    if (StillHoldsDeployment(d)) return;
    std::lock_guard<std::mutex> lock(mu);
    bool any = false;
    for (auto& [id, p] : pending) {
      if (!p->error.ok() || !p->uses[d]) continue;
      p->error = Unavailable(DeviceName(d) + " was lost: " + what);
      any = true;
    }
    if (any) cv.notify_all();
  }

  // Whether device `d` answers Health within half a second with the
  // deployment it was given: the same process, its state intact (a
  // restarted one holds none). A frozen or dead one costs at most that.
  bool StillHoldsDeployment(int d) {
    std::string want;
    {
      std::lock_guard<std::mutex> lock(mu);
      want = deploy_ids[d];
    }
    if (want.empty()) return false;
    rpc::HealthRequest q;
    q.set_protocol(kProtocolVersion);
    rpc::HealthReply r;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(500));
    return stubs[d]->Health(&ctx, q, &r).ok() && r.deployment() == want;
  }

  grpc::Status Health(grpc::ServerContext* ctx, const rpc::HealthRequest*,
                      rpc::HealthReply* rep) override {
    return GuardRpc(
        std::string("the coordinator"), "Health", [&]() -> grpc::Status {
          if (auto s = RequireMember(*ctx, tls(), "the coordinator", "Health");
              !s.ok()) {
            return s;
          }
          rep->set_protocol(kProtocolVersion);
          rep->set_name("coordinator");
          return grpc::Status::OK;
        });
  }

  // A part of the model output, from a worker.
  grpc::Status Send(grpc::ServerContext* ctx, const rpc::TensorMessage* m,
                    rpc::Ack*) override {
    return GuardRpc(
        std::string("the coordinator"), "Send", [&]() -> grpc::Status {
          if (auto s = RequireRole(*ctx, tls(), TlsRole::kDevice,
                                   "the coordinator", "Send");
              !s.ok()) {
            return s;
          }
          if (auto s = CheckProtocol(m->protocol(), "the coordinator");
              !s.ok()) {
            return s;
          }
          const int xi = m->transfer();
          if (xi < 0 || xi >= static_cast<int>(plan.transfers.size()) ||
              plan.transfers[xi].dst.task != kModelOutput) {
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                "not a transfer of the model output");
          }
          const Transfer& x = plan.transfers[xi];
          std::vector<int64_t> shape(m->shape().begin(), m->shape().end());
          if (shape != x.dst.region.extent()) {
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                "model output part has the wrong shape");
          }
          auto part = TensorFromMessage(*m, shape);
          if (!part.ok()) return ToGrpc(part.status());
          std::lock_guard<std::mutex> lock(mu);
          auto it = pending.find(m->request());
          if (it == pending.end())
            return grpc::Status::OK;  // timed out already
          Pending& p = *it->second;
          Status s = CopyRegion(*part, Region::Full(part->shape), &p.output,
                                x.dst.region, x.merge);
          if (!s.ok() && p.error.ok()) p.error = s;
          p.parts_left--;
          if (p.done()) cv.notify_all();
          return grpc::Status::OK;
        });
  }

  // Deploy's reachability check: each worker sends one empty message here.
  grpc::Status Sink(grpc::ServerContext* ctx, const rpc::SinkMessage* m,
                    rpc::Ack*) override {
    return GuardRpc(
        std::string("the coordinator"), "Sink", [&]() -> grpc::Status {
          if (auto s = RequireMember(*ctx, tls(), "the coordinator", "Sink");
              !s.ok()) {
            return s;
          }
          return CheckProtocol(m->protocol(), "the coordinator");
        });
  }

  grpc::Status Abort(grpc::ServerContext* ctx, const rpc::AbortMessage* m,
                     rpc::Ack*) override {
    return GuardRpc(
        std::string("the coordinator"), "Abort", [&]() -> grpc::Status {
          if (auto s = RequireRole(*ctx, tls(), TlsRole::kDevice,
                                   "the coordinator", "Abort");
              !s.ok()) {
            return s;
          }
          std::lock_guard<std::mutex> lock(mu);
          auto it = pending.find(m->request());
          if (it != pending.end() && it->second->error.ok()) {
            it->second->error = Unavailable("device " + m->device() +
                                            " reports: " + m->error());
            cv.notify_all();
          }
          return grpc::Status::OK;
        });
  }

  std::string Unreachable() {
    std::string down;
    for (size_t d = 0; d < devs.size(); ++d) {
      rpc::HealthRequest req;
      req.set_protocol(kProtocolVersion);
      rpc::HealthReply rep;
      grpc::ClientContext ctx;
      ctx.set_deadline(DeadlineIn(1000));
      grpc::Status s = stubs[d]->Health(&ctx, req, &rep);
      if (!s.ok()) {
        down += (down.empty() ? "" : "; ") + DeviceName(d) +
                " does not answer: " + s.error_message() +
                TlsHint(s, tls() != nullptr);
      }
    }
    return down;
  }
};

Coordinator::Coordinator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Coordinator::~Coordinator() {
  if (impl_->server) impl_->server->Shutdown(DeadlineIn(200));
}

const Plan& Coordinator::plan() const { return impl_->plan; }
const std::vector<DeviceSpec>& Coordinator::devices() const {
  return impl_->devs;
}
const std::string& Coordinator::reply_address() const {
  return impl_->reply_to;
}

StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(
    const Plan& plan, const Cluster& cluster, const CoordinatorOptions& opts) {
  RETURN_IF_ERROR(VerifyPlan(plan));
  auto impl = std::make_unique<Impl>();
  impl->plan = plan;
  impl->flow = IndexFlow(plan);
  impl->plan_json = PlanToJson(plan).dump();
  impl->opts = opts;
  if (!impl->opts.tls && cluster.tls.any()) {
    ASSIGN_OR_RETURN(impl->opts.tls, LoadTlsIdentity(cluster.tls));
  }
  if (opts.max_message_bytes > 0) impl->max_msg = opts.max_message_bytes;
  // Plan devices are matched to cluster devices by name, or by position
  // when the plan was made for --devices N.
  std::map<std::string, const DeviceSpec*> by_name;
  for (const auto& d : cluster.devices) by_name[d.name] = &d;
  bool all_named = true;
  for (const auto& d : plan.devices) all_named &= by_name.count(d.name) > 0;
  if (!all_named && plan.devices.size() != cluster.devices.size()) {
    return InvalidArgument(
        "the plan has " + std::to_string(plan.devices.size()) +
        " devices that the cluster (" + std::to_string(cluster.devices.size()) +
        " devices) does not name");
  }
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (size_t i = 0; i < plan.devices.size(); ++i) {
    const DeviceSpec& d =
        all_named ? *by_name[plan.devices[i].name] : cluster.devices[i];
    if (d.address.empty()) {
      return InvalidArgument("cluster device " + d.name + " has no address");
    }
    impl->devs.push_back(d);
    channels.push_back(MakeChannel(d.address, impl->max_msg, impl->tls()));
    impl->stubs.push_back(rpc::Worker::NewStub(channels.back()));
  }
  impl->deployment.assign(plan.devices.size(), "");
  impl->deploy_ids.assign(plan.devices.size(), "");
  impl->silent.assign(plan.devices.size(), 0);
  impl->input_link =
      std::make_unique<LinkShaper>(impl->devs[plan.input_device].link);
  for (const auto& x : plan.transfers) {
    if (x.dst.task == kModelOutput) impl->output_parts++;
  }
  std::random_device rd;
  impl->nonce = std::to_string(rd()) + std::to_string(rd());
  ASSIGN_OR_RETURN(ReplyEndpoint ep,
                   ChooseReplyEndpoint(opts.advertise, impl->devs[0].address,
                                       impl->devs[0].name));
  grpc::ServerBuilder b;
  int port = 0;
  const std::string listen = JoinHostPort(ep.listen_host, ep.port);
  b.AddListeningPort(listen, ServerCredentialsFor(impl->tls()), &port);
  ConfigureServer(&b, impl->max_msg);
  b.RegisterService(impl.get());
  impl->server = b.BuildAndStart();
  if (!impl->server || port == 0) {
    return Unavailable(
        "the coordinator cannot listen on " + listen +
        (opts.advertise.empty()
             ? " (its address toward device " + impl->devs[0].name + ")"
             : " (what --advertise " + opts.advertise +
                   " names: is it an address of this machine, and the port "
                   "free?)"));
  }
  impl->reply_to = JoinHostPort(ep.advertise_host, port);
  Impl* raw = impl.get();
  impl->watch = std::make_unique<ConnectionWatch>(
      std::move(channels),
      [raw](int d, const std::string& what) { raw->DeviceLost(d, what); });
  std::vector<rpc::Worker::Stub*> stubs;
  for (const auto& s : impl->stubs) stubs.push_back(s.get());
  impl->probe = std::make_unique<DeviceProbe>(
      std::move(stubs), [raw] { return raw->DevicesInUse(); },
      [raw](int d, const std::string& what) { raw->DeviceSilent(d, what); });
  return std::unique_ptr<Coordinator>(new Coordinator(std::move(impl)));
}

Status Coordinator::CheckHealth() {
  Impl& m = *impl_;
  for (size_t d = 0; d < m.devs.size(); ++d) {
    rpc::HealthRequest req;
    req.set_protocol(kProtocolVersion);
    rpc::HealthReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    grpc::Status s = m.stubs[d]->Health(&ctx, req, &rep);
    if (!s.ok()) {
      return FromGrpc(s, m.DeviceName(d) + " does not answer" +
                             TlsHint(s, m.tls() != nullptr));
    }
    if (rep.protocol() != kProtocolVersion) {
      return FailedPrecondition(
          m.DeviceName(d) + " speaks shoal protocol version " +
          std::to_string(rep.protocol()) + " but this coordinator speaks " +
          std::to_string(kProtocolVersion));
    }
  }
  return Status::Ok();
}

namespace {

// The weights a deployment needs, by hash.
using Blobs = std::map<std::string, std::string>;  // hash -> bytes

// Device `d`'s Deploy request: the plan, its peers, and a reference to each
// weight of its tasks, whose bytes go to `blobs`.
StatusOr<rpc::DeployRequest> MakeDeployRequest(const Coordinator::Impl& m,
                                               int d,
                                               const WeightStore& weights,
                                               bool keep_previous,
                                               Blobs* blobs) {
  const Plan& p = m.plan;
  rpc::DeployRequest req;
  req.set_protocol(kProtocolVersion);
  req.set_plan_json(m.plan_json);
  req.set_device(d);
  for (const auto& dv : m.devs) req.add_peers(dv.address);
  std::string plan_id = m.plan_json;
  for (const auto& a : req.peers()) plan_id += "|" + a;
  req.set_plan_id(HashString(plan_id));
  req.set_keep_previous(keep_previous);
  std::string id = req.plan_id() + "|" + std::to_string(d);
  for (const auto& t : p.tasks) {
    bool mine = false;
    for (int dv : t.devices) mine |= dv == d;
    if (!mine || t.weights.empty()) continue;
    ASSIGN_OR_RETURN(WeightStore w, SliceTaskWeights(t, weights));
    auto* tw = req.add_tasks();
    tw->set_task(t.id);
    for (auto& [name, tensor] : w) {
      std::string bytes;
      // An int8 weight goes as a byte a value: a quarter of the upload and
      // of the worker's blob cache.
      const bool int8 =
          IsInt8Weight(t.fragment, name) && EncodeInt8Values(tensor, &bytes);
      if (!int8) TensorToBytes(tensor, &bytes);
      const std::string h = HashString(bytes);
      auto* ref = tw->add_weights();
      ref->set_name(name);
      ref->set_int8(int8);
      ref->set_hash(h);
      for (int64_t v : tensor.shape) ref->add_shape(v);
      id += "|" + std::to_string(t.id) + ":" + name + ":" + h;
      blobs->emplace(h, std::move(bytes));
    }
  }
  req.set_deployment(HashString(id));
  return req;
}

// The common name of the certificate the server showed on a finished call
// ("" on plaintext).
std::string PeerProperty(const grpc::ClientContext& ctx, const char* name) {
  const std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (!auth) return "";
  const auto v = auth->FindPropertyValues(name);
  return v.empty() ? "" : std::string(v[0].data(), v[0].size());
}
std::string PeerCommonName(const grpc::ClientContext& ctx) {
  return PeerProperty(ctx, GRPC_X509_CN_PROPERTY_NAME);
}

// Device `d`'s Health reply, once it answers in our protocol version.
StatusOr<rpc::HealthReply> CheckDeviceHealth(Coordinator::Impl& m, int d) {
  rpc::HealthRequest hq;
  hq.set_protocol(kProtocolVersion);
  rpc::HealthReply hr;
  grpc::Status s;
  std::string peer;  // the common name of the certificate it showed
  std::string peer_pem;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(5000));
    s = m.stubs[d]->Health(&ctx, hq, &hr);
    peer = PeerCommonName(ctx);
    peer_pem = PeerProperty(ctx, GRPC_X509_PEM_CERT_PROPERTY_NAME);
  }
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    // A channel still backing off from a worker that was down fails at
    // once; give a restarted worker a second to be reached again.
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(1500));
    ctx.set_wait_for_ready(true);
    grpc::Status retry = m.stubs[d]->Health(&ctx, hq, &hr);
    if (retry.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      s = retry;
      peer = PeerCommonName(ctx);
      peer_pem = PeerProperty(ctx, GRPC_X509_PEM_CERT_PROPERTY_NAME);
    }
  }
  if (!s.ok()) {
    return FromGrpc(s, m.DeviceName(d) + " does not answer" +
                           TlsHint(s, m.tls() != nullptr));
  }
  // With TLS a certificate is a device: the worker at this address must
  // show the one issued to the device the cluster file names here, or it
  // would receive that device's weights and inputs (a worker of another
  // device, or one issued to a name outside the cluster).
  if (m.tls() != nullptr && peer != m.devs[d].name) {
    return FailedPrecondition(
        m.DeviceName(d) + " answered with the certificate of '" + peer +
        "', not of '" + m.devs[d].name +
        "': the cluster file names another device at that address, or the "
        "worker there runs with another device's certificate");
  }
  // A lost board's certificate, revoked by the cluster's CA.
  if (m.tls() != nullptr && m.tls()->revoked &&
      m.tls()->revoked->IsRevokedPem(peer_pem)) {
    return FailedPrecondition(
        m.DeviceName(d) + " answered with a revoked certificate (" +
        m.tls()->revoked->path() + "): issue the device a new one");
  }
  if (hr.protocol() != kProtocolVersion) {
    return FailedPrecondition(
        m.DeviceName(d) + " speaks shoal protocol version " +
        std::to_string(hr.protocol()) + " but this coordinator speaks " +
        std::to_string(kProtocolVersion));
  }
  return hr;
}

// Outputs and aborts come back to reply_to: a device that cannot
// reach it (another host told 127.0.0.1, a firewall) would make
// every request time out with nothing to say why.
Status CheckReachesCoordinator(Coordinator::Impl& m, int d) {
  rpc::LinkProbeRequest pq;
  pq.set_protocol(kProtocolVersion);
  pq.set_target(m.reply_to);
  pq.set_target_coordinator(true);
  pq.set_bytes(0);
  pq.set_count(1);
  pq.set_timeout_ms(3000);
  rpc::LinkProbeReply pr;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(5000));
  grpc::Status s = m.stubs[d]->ProbeLink(&ctx, pq, &pr);
  if (s.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    return FromGrpc(s, m.DeviceName(d));  // not a matter of addresses
  }
  if (!s.ok()) {
    return Unavailable(
        m.DeviceName(d) + " cannot reach this coordinator at " + m.reply_to +
        " (" + s.error_message() +
        "): give --advertise an address of this machine that the device "
        "can reach, and open its port in the firewall");
  }
  return Status::Ok();
}

// The input leaves as the input device's worker sends: through the
// link its transport emulates (none where the kernel shapes it).
// With an emulated shared medium the input takes the same channel,
// when this coordinator runs on the host whose file it names (the
// emulation is one host's); elsewhere the channel is not emulated.
void ShapeInputLink(Coordinator::Impl& m, const rpc::HealthReply& hr) {
  std::shared_ptr<SharedMedium> medium;
  if (!hr.medium_path().empty() && hr.medium_bandwidth_bps() > 0 &&
      std::filesystem::exists(hr.medium_path())) {
    auto opened = SharedMedium::Open(hr.medium_path(),
                                     Medium{true, hr.medium_bandwidth_bps()});
    if (opened.ok()) medium = opened.value();
  }
  m.input_link = std::make_unique<LinkShaper>(
      Link{hr.link_bandwidth_bps(), hr.link_latency_s()}, medium);
}

// Refuse before uploading what cannot fit (DeviceWeightMemory). The
// worker checks again, activations too.
Status CheckWeightsFit(const Coordinator::Impl& m, int d, const Blobs& blobs,
                       int64_t budget) {
  int64_t weight_bytes = 0, largest = 0;
  for (const auto& [h, b] : blobs) {
    weight_bytes += b.size();
    largest = std::max<int64_t>(largest, b.size());
  }
  const int64_t need = DeviceWeightMemory(weight_bytes, largest);
  if (budget > 0 && need > budget) {
    return FailedPrecondition(
        m.DeviceName(d) + " refuses the deployment: it needs at least " +
        MiB(need) + " (" + MiB(weight_bytes) + " of weights + " + MiB(largest) +
        " while its largest weight is reordered) but its memory budget "
        "is " +
        MiB(budget));
  }
  return Status::Ok();
}

// Uploads the blobs that device `d` does not have yet, in chunks, counting
// them in `r` and reporting them to the options' upload_progress.
Status UploadMissingBlobs(Coordinator::Impl& m, int d, const Blobs& blobs,
                          DeployReport* r) {
  auto deadline = [&] { return DeadlineIn(m.opts.deploy_timeout_ms); };
  rpc::HaveBlobsRequest hb;
  hb.set_protocol(kProtocolVersion);
  for (const auto& [h, b] : blobs) hb.add_hashes(h);
  rpc::HaveBlobsReply missing;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    RETURN_IF_ERROR(
        FromGrpc(m.stubs[d]->HaveBlobs(&ctx, hb, &missing), m.DeviceName(d)));
  }
  const auto& progress = m.opts.upload_progress;
  if (progress && missing.missing_size() > 0) {
    int64_t bytes = 0;
    for (const auto& h : missing.missing()) bytes += blobs.at(h).size();
    progress(m.devs[d].name, bytes, 0);
  }
  if (missing.missing_size() > 0) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    rpc::PutBlobsReply pr;
    auto w = m.stubs[d]->PutBlobs(&ctx, &pr);
    for (const auto& h : missing.missing()) {
      const std::string& b = blobs.at(h);
      for (size_t off = 0; off == 0 || off < b.size(); off += kBlobChunkBytes) {
        rpc::BlobChunk c;
        c.set_protocol(kProtocolVersion);
        c.set_hash(h);
        c.set_total_bytes(b.size());
        c.set_data(b.substr(off, kBlobChunkBytes));
        if (!w->Write(c)) break;
        r->uploaded_bytes[d] += c.data().size();
        if (progress) progress(m.devs[d].name, 0, c.data().size());
        if (b.empty()) break;
      }
    }
    w->WritesDone();
    RETURN_IF_ERROR(FromGrpc(w->Finish(), m.DeviceName(d) + " upload"));
  }
  return Status::Ok();
}

// Sends the Deploy request and records what device `d` holds.
Status SendDeploy(Coordinator::Impl& m, int d, const rpc::DeployRequest& req,
                  DeployReport* r) {
  rpc::DeployReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(m.opts.deploy_timeout_ms));
  RETURN_IF_ERROR(
      FromGrpc(m.stubs[d]->Deploy(&ctx, req, &rep), m.DeviceName(d)));
  r->reused[d] = rep.reused();
  r->weight_bytes[d] = rep.weight_bytes();
  r->activation_bytes[d] = rep.activation_bytes();
  // Written only when new: Run reads them without a lock, and a redeploy
  // (serve repairing a device) runs beside requests.
  if (m.deployment[d] != req.plan_id()) m.deployment[d] = req.plan_id();
  {
    // The connection watch reads it (DeviceLost).
    std::lock_guard<std::mutex> lock(m.mu);
    m.deploy_ids[d] = req.deployment();
  }
  return Status::Ok();
}

// Checks device `d`, uploads the weights it lacks and deploys the plan there.
Status DeployOne(Coordinator::Impl& m, int d, const WeightStore& weights,
                 bool keep_previous, DeployReport* r) {
  Blobs blobs;
  ASSIGN_OR_RETURN(const rpc::DeployRequest req,
                   MakeDeployRequest(m, d, weights, keep_previous, &blobs));
  ASSIGN_OR_RETURN(const rpc::HealthReply hr, CheckDeviceHealth(m, d));
  m.dilations[d] = hr.dilation() > 0 ? hr.dilation() : 1.0;
  RETURN_IF_ERROR(CheckReachesCoordinator(m, d));
  if (d == m.plan.input_device) ShapeInputLink(m, hr);
  RETURN_IF_ERROR(CheckWeightsFit(m, d, blobs, hr.memory_budget()));
  RETURN_IF_ERROR(UploadMissingBlobs(m, d, blobs, r));
  return SendDeploy(m, d, req, r);
}

}  // namespace

Status Coordinator::Deploy(const WeightStore& weights, DeployReport* report) {
  std::vector<int> all(impl_->devs.size());
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int>(d);
  return DeployTo(weights, all, impl_->opts.keep_previous, report);
}

Status Coordinator::Redeploy(const WeightStore& weights,
                             const std::vector<int>& devices) {
  for (int d : devices) {
    if (d < 0 || d >= static_cast<int>(impl_->devs.size())) {
      return InvalidArgument("no plan device " + std::to_string(d));
    }
  }
  return DeployTo(weights, devices, /*keep_previous=*/false, nullptr);
}

double Coordinator::dilation() const { return impl_->dilation; }

const std::vector<std::string>& Coordinator::deployment_ids() const {
  return impl_->deploy_ids;
}

namespace {

std::string Fmt(double x) {
  char b[32];
  std::snprintf(b, sizeof(b), "%g", x);
  return b;
}

// An emulated cluster runs K times slower than the boards it emulates
// (WorkerOptions::dilation), all its workers alike: deadlines stretch by K
// and times are reported divided by it. Workers that disagree were started
// apart and cannot be measured together.
Status AgreeOnDilation(Coordinator::Impl& m) {
  double k = 0;
  int first = -1;
  for (size_t d = 0; d < m.dilations.size(); ++d) {
    if (m.dilations[d] <= 0) continue;  // not deployed in this call
    if (first < 0) {
      k = m.dilations[d];
      first = static_cast<int>(d);
    } else if (m.dilations[d] != k) {
      return FailedPrecondition(
          m.DeviceName(first) + " runs at time dilation " + Fmt(k) + " but " +
          m.DeviceName(static_cast<int>(d)) + " at " + Fmt(m.dilations[d]) +
          ": start the emulated cluster again with one --dilation");
    }
  }
  if (first >= 0) m.dilation = k;
  return Status::Ok();
}

}  // namespace

Status Coordinator::DeployTo(const WeightStore& weights,
                             const std::vector<int>& devices,
                             bool keep_previous, DeployReport* report) {
  Impl& m = *impl_;
  const size_t n = m.devs.size();
  DeployReport r;
  r.reused.assign(n, 0);
  r.uploaded_bytes.assign(n, 0);
  r.weight_bytes.assign(n, 0);
  r.activation_bytes.assign(n, 0);
  const auto t0 = Clock::now();
  m.dilations.resize(n, 0.0);
  std::vector<Status> st(n);
  ParallelFor(devices.size(), kDeployThreads, [&](size_t i) {
    const int d = devices[i];
    try {
      st[d] = DeployOne(m, d, weights, keep_previous, &r);
    } catch (const std::exception& e) {
      st[d] = Internal("deploying to " + m.DeviceName(d) +
                       " failed on an unexpected condition: " + e.what());
    }
  });
  for (const auto& s : st) RETURN_IF_ERROR(s);
  RETURN_IF_ERROR(AgreeOnDilation(m));
  r.ms = MsSince(t0);
  if (report != nullptr) *report = std::move(r);
  return Status::Ok();
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
std::shared_ptr<Pending> NewPending(const Coordinator::Impl& m, int64_t seq) {
  const Plan& p = m.plan;
  auto pend = std::make_shared<Pending>();
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
                  const std::string& id, int64_t seq, Pending* pend,
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
                   const Pending& pend, Clock::time_point expiry, int64_t seq,
                   int64_t timeout_ms) {
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

Status Coordinator::Release() {
  Impl& m = *impl_;
  Status first;
  for (size_t d = 0; d < m.devs.size(); ++d) {
    if (m.deployment[d].empty()) continue;
    rpc::ReleaseRequest req;
    req.set_protocol(kProtocolVersion);
    req.set_plan_id(m.deployment[d]);
    rpc::ReleaseReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(2000));
    Status s = FromGrpc(m.stubs[d]->Release(&ctx, req, &rep),
                        m.DeviceName(d) + " release");
    if (first.ok()) first = s;
  }
  return first;
}

void Coordinator::Cancel(const Status& why) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.cancelled = why;
  for (auto& [id, p] : m.pending) {
    if (p->error.ok()) p->error = why;
  }
  m.cv.notify_all();
}

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
