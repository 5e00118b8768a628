#include "runtime/coordinator.h"

#include <map>
#include <mutex>
#include <random>

#include "plan/dataflow.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "runtime/connection_watch.h"
#include "runtime/coordinator_impl.h"
#include "runtime/device_probe.h"
#include "runtime/link_shaper.h"
#include "runtime/peer_auth.h"
#include "runtime/wire.h"
#include "util/net_address.h"

namespace shoal {

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

double Coordinator::dilation() const { return impl_->dilation; }

const std::vector<std::string>& Coordinator::deployment_ids() const {
  return impl_->deploy_ids;
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

}  // namespace shoal
