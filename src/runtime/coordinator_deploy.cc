// Deploying a plan: each device's request, its health and reachability
// checked, the weights it lacks uploaded, and the cluster's time dilation
// agreed (docs/architecture.md).
#include <filesystem>
#include <map>
#include <mutex>

#include "graph/quantization.h"
#include "plan/plan_cost.h"
#include "plan/task_weights.h"
#include "runtime/coordinator_impl.h"
#include "runtime/link_shaper.h"
#include "runtime/peer_auth.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"
#include "util/clock.h"
#include "util/parallel_for.h"
#include "util/units.h"

namespace shoal {

using Clock = std::chrono::steady_clock;

// Devices deployed to at once, at most: a cluster of any size is served by
// this many threads, each uploading to the next device when it is done.
constexpr size_t kDeployThreads = 32;

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
  // A channel still backing off from a worker that was down fails at
  // once; give a restarted worker a second to be reached again. A worker
  // short of memory under a flood of connections closes the ones that carry
  // no call yet (a GOAWAY), and a fresh channel's is such a one for a
  // moment: it is alive, so ask again on a new connection, a few times.
  for (int retry = 0; retry < 4 && IsRetryableUnavailable(s, retry); ++retry) {
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(1500));
    ctx.set_wait_for_ready(true);
    grpc::Status again = m.stubs[d]->Health(&ctx, hq, &hr);
    if (again.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) break;
    s = again;
    peer = PeerCommonName(ctx);
    peer_pem = PeerProperty(ctx, GRPC_X509_PEM_CERT_PROPERTY_NAME);
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

}  // namespace shoal
