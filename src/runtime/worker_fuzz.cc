// libFuzzer target: every worker RPC's handler, called in-process with
// fuzzed request messages (docs/testing.md).
//
// One input is a script of calls, each [kind: 1 byte][length: 4 bytes, little
// endian][a serialized request of that kind]; consecutive PutBlobs records
// are the chunks of one stream. The worker starts once, deployed with a
// small plan (test/fuzz/worker_base_plan.json, device 0 of 2, weights made
// here), so that Send messages reach mailboxes and tasks; whatever a script
// changes (another deployment, a release) is undone after it.
//
// Nothing leaves the process: every call the worker makes (outputs, aborts,
// probes) goes over an in-process channel to a sink that acknowledges them.
//
// A handler that lets an exception escape (GuardRpc's "unexpected
// condition") aborts the run: the catch-all keeps a worker alive, but an
// exception there means an input no check foresaw.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "plan/graph_json.h"
#include "plan/plan_json.h"
#include "runtime/wire.h"
#include "runtime/worker.h"

namespace shoal {
namespace {

enum Kind : uint8_t {
  kHealth,
  kHaveBlobs,
  kPutBlobs,
  kDeploy,
  kSend,
  kAbort,
  kStats,
  kRelease,
  kProfile,
  kProbeLink,
  kSink,
  kKinds
};

// Answers whatever the worker sends; no sockets.
class SinkService final : public rpc::Worker::Service {
  grpc::Status Send(grpc::ServerContext*, const rpc::TensorMessage*,
                    rpc::Ack*) override {
    return grpc::Status::OK;
  }
  grpc::Status Abort(grpc::ServerContext*, const rpc::AbortMessage*,
                     rpc::Ack*) override {
    return grpc::Status::OK;
  }
  grpc::Status Sink(grpc::ServerContext*, const rpc::SinkMessage*,
                    rpc::Ack*) override {
    return grpc::Status::OK;
  }
};

struct Harness {
  SinkService sink;
  std::unique_ptr<grpc::Server> sink_server;
  std::unique_ptr<Worker> worker;
  Plan plan;
  std::vector<rpc::BlobChunk> blobs;  // the base deployment's weights
  rpc::DeployRequest deploy;
};

Harness* h = nullptr;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "worker_fuzz: %s\n", why.c_str());
  std::abort();
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) Die("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// An exception escaped a handler into GuardRpc: a missing check.
void Check(const grpc::Status& s, const char* rpc) {
  if (s.error_code() == grpc::StatusCode::INTERNAL &&
      s.error_message().find("unexpected condition") != std::string::npos) {
    Die(std::string(rpc) + ": " + s.error_message());
  }
}

// The base deployment: device 0 of the plan, weights of a fixed pattern.
void MakeBaseDeployment(Harness* x) {
  const std::string json = ReadFile(std::string(SHOAL_SOURCE_DIR) +
                                    "/test/fuzz/worker_base_plan.json");
  auto p = PlanFromJson(nlohmann::json::parse(json));
  if (!p.ok()) Die(p.status().message());
  x->plan = *p;
  rpc::DeployRequest& d = x->deploy;
  d.set_protocol(kProtocolVersion);
  d.set_plan_json(json);
  d.set_device(0);
  for (size_t i = 0; i < x->plan.devices.size(); ++i) {
    d.add_peers("127.0.0.1:" + std::to_string(7000 + i));
  }
  d.set_plan_id(HashString(json));
  d.set_deployment(HashString(json + "|0"));
  std::set<std::string> sent;
  for (const Task& t : x->plan.tasks) {
    bool mine = false;
    for (int dv : t.devices) mine |= dv == 0;
    if (!mine || t.weights.empty()) continue;
    auto* tw = d.add_tasks();
    tw->set_task(t.id);
    for (const WeightSlice& w : t.weights) {
      Tensor v(t.fragment.tensors.at(w.name).shape);
      for (size_t i = 0; i < v.data.size(); ++i) {
        v.data[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 16;
      }
      std::string bytes;
      TensorToBytes(v, &bytes);
      auto* ref = tw->add_weights();
      ref->set_name(w.name);
      ref->set_hash(HashString(bytes));
      for (int64_t e : v.shape) ref->add_shape(e);
      if (!sent.insert(ref->hash()).second) continue;
      rpc::BlobChunk c;
      c.set_protocol(kProtocolVersion);
      c.set_hash(ref->hash());
      c.set_total_bytes(bytes.size());
      c.set_data(bytes);
      x->blobs.push_back(c);
    }
  }
}

// Puts the base deployment back (after a script deployed or released).
void Redeploy() {
  grpc::ServerContext ctx;
  rpc::HealthRequest hq;
  rpc::HealthReply hr;
  h->worker->service()->Health(&ctx, &hq, &hr);
  if (hr.deployment() == h->deploy.deployment()) return;
  rpc::PutBlobsReply pr;
  grpc::Status s = h->worker->PutBlobs(h->blobs, &pr);
  if (!s.ok()) Die("base blobs: " + s.error_message());
  rpc::DeployReply dr;
  grpc::ServerContext ctx2;
  s = h->worker->service()->Deploy(&ctx2, &h->deploy, &dr);
  if (!s.ok()) Die("base deployment: " + s.error_message());
}

// Runs one script; returns the request ids its Send calls named.
std::set<std::string> RunScript(const uint8_t* data, size_t size) {
  std::set<std::string> requests;
  std::vector<rpc::BlobChunk> stream;
  auto flush = [&] {
    if (stream.empty()) return;
    rpc::PutBlobsReply rep;
    Check(h->worker->PutBlobs(stream, &rep), "PutBlobs");
    stream.clear();
  };
  rpc::Worker::Service* w = h->worker->service();
  size_t at = 0;
  while (at + 5 <= size) {
    const uint8_t kind = data[at] % kKinds;
    uint32_t len;
    std::memcpy(&len, data + at + 1, 4);
    at += 5;
    len = static_cast<uint32_t>(std::min<size_t>(len, size - at));
    const uint8_t* msg = data + at;
    at += len;
    if (kind != kPutBlobs) flush();
    grpc::ServerContext ctx;
    switch (kind) {
      case kHealth: {
        rpc::HealthRequest q;
        rpc::HealthReply r;
        if (q.ParseFromArray(msg, len))
          Check(w->Health(&ctx, &q, &r), "Health");
        break;
      }
      case kHaveBlobs: {
        rpc::HaveBlobsRequest q;
        rpc::HaveBlobsReply r;
        if (q.ParseFromArray(msg, len)) {
          Check(w->HaveBlobs(&ctx, &q, &r), "HaveBlobs");
        }
        break;
      }
      case kPutBlobs: {
        rpc::BlobChunk c;
        if (c.ParseFromArray(msg, len)) stream.push_back(std::move(c));
        break;
      }
      case kDeploy: {
        rpc::DeployRequest q;
        rpc::DeployReply r;
        if (q.ParseFromArray(msg, len))
          Check(w->Deploy(&ctx, &q, &r), "Deploy");
        break;
      }
      case kSend: {
        rpc::TensorMessage q;
        rpc::Ack r;
        if (q.ParseFromArray(msg, len)) {
          requests.insert(q.request());
          Check(w->Send(&ctx, &q, &r), "Send");
        }
        break;
      }
      case kAbort: {
        rpc::AbortMessage q;
        rpc::Ack r;
        if (q.ParseFromArray(msg, len)) Check(w->Abort(&ctx, &q, &r), "Abort");
        break;
      }
      case kStats: {
        rpc::StatsRequest q;
        rpc::StatsReply r;
        if (q.ParseFromArray(msg, len)) Check(w->Stats(&ctx, &q, &r), "Stats");
        break;
      }
      case kRelease: {
        rpc::ReleaseRequest q;
        rpc::ReleaseReply r;
        if (q.ParseFromArray(msg, len)) {
          Check(w->Release(&ctx, &q, &r), "Release");
        }
        break;
      }
      case kProfile: {
        rpc::ProfileRequest q;
        rpc::ProfileReply r;
        if (!q.ParseFromArray(msg, len)) break;
        // Profiling times a graph for as long as the caller asks (its
        // coordinator, the one role allowed to): a few runs here.
        q.set_min_runs(std::min(q.min_runs(), 2));
        q.set_min_seconds(0);
        q.set_max_seconds(0.01);
        Check(w->Profile(&ctx, &q, &r), "Profile");
        break;
      }
      case kProbeLink: {
        rpc::LinkProbeRequest q;
        rpc::LinkProbeReply r;
        if (q.ParseFromArray(msg, len)) {
          Check(w->ProbeLink(&ctx, &q, &r), "ProbeLink");
        }
        break;
      }
      case kSink: {
        rpc::SinkMessage q;
        rpc::Ack r;
        if (q.ParseFromArray(msg, len)) Check(w->Sink(&ctx, &q, &r), "Sink");
        break;
      }
    }
  }
  flush();
  return requests;
}

// --- Seeds (SHOAL_FUZZ_WRITE_SEEDS=DIR) -------------------------------------

void Append(std::string* script, Kind kind,
            const google::protobuf::MessageLite& m) {
  const std::string bytes = m.SerializeAsString();
  const uint32_t len = bytes.size();
  script->push_back(static_cast<char>(kind));
  script->append(reinterpret_cast<const char*>(&len), 4);
  script->append(bytes);
}

// Every transfer into device 0 of request `id`: its tasks all run.
void AppendRequest(std::string* s, const std::string& id, int64_t seq) {
  const Plan& p = h->plan;
  for (size_t xi = 0; xi < p.transfers.size(); ++xi) {
    const Transfer& x = p.transfers[xi];
    if (x.dst.task < 0 || p.DeviceOf(x.dst.task, seq) != 0) continue;
    rpc::TensorMessage m;
    m.set_protocol(kProtocolVersion);
    m.set_request(id);
    m.set_seq(seq);
    m.set_reply_to("127.0.0.1:6999");
    m.set_timeout_ms(2000);
    m.set_transfer(xi);
    m.set_deployment(h->deploy.plan_id());
    Tensor t(x.dst.region.extent());
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = (i % 5) * 0.25f;
    for (int64_t e : t.shape) m.add_shape(e);
    TensorToBytes(t, m.mutable_data());
    Append(s, kSend, m);
  }
}

void WriteSeeds(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> seeds;
  const uint32_t v = kProtocolVersion;
  {
    std::string s;
    rpc::HealthRequest q;
    q.set_protocol(v);
    Append(&s, kHealth, q);
    rpc::HaveBlobsRequest hb;
    hb.set_protocol(v);
    for (const auto& c : h->blobs) hb.add_hashes(c.hash());
    hb.add_hashes("0123456789abcdef");
    Append(&s, kHaveBlobs, hb);
    seeds.emplace_back("health-haveblobs", s);
  }
  {
    std::string s;
    for (const auto& c : h->blobs) {
      if (c.data().size() > 4096) continue;  // small seeds fuzz faster
      // In two chunks, the second without the header fields.
      rpc::BlobChunk a = c, b;
      a.set_data(c.data().substr(0, c.data().size() / 2));
      b.set_protocol(v);
      b.set_data(c.data().substr(c.data().size() / 2));
      Append(&s, kPutBlobs, a);
      Append(&s, kPutBlobs, b);
    }
    rpc::DeployRequest d = h->deploy;
    d.set_deployment("another");
    d.set_keep_previous(true);
    Append(&s, kDeploy, d);
    seeds.emplace_back("putblobs-deploy", s);
  }
  {
    std::string s;
    AppendRequest(&s, "r1", 0);
    rpc::StatsRequest st;
    st.set_protocol(v);
    st.set_timeline(true);
    st.set_reset(true);
    Append(&s, kStats, st);
    seeds.emplace_back("send-request-stats", s);
  }
  {
    std::string s;
    AppendRequest(&s, "r2", 1);
    rpc::AbortMessage a;
    a.set_protocol(v);
    a.set_request("r2");
    a.set_device("dev1");
    a.set_error("gone");
    Append(&s, kAbort, a);
    seeds.emplace_back("send-abort", s);
  }
  {
    std::string s;
    rpc::ReleaseRequest r;
    r.set_protocol(v);
    r.set_plan_id(h->deploy.plan_id());
    Append(&s, kRelease, r);
    AppendRequest(&s, "r3", 0);
    seeds.emplace_back("release-send", s);
  }
  {
    std::string s;
    for (const Task& t : h->plan.tasks) {
      if (t.fragment.nodes.empty()) continue;
      rpc::ProfileRequest q;
      q.set_protocol(v);
      q.set_graph_json(GraphToJson(t.fragment).dump());
      q.set_seed(1);
      q.set_min_runs(1);
      q.set_per_node(true);
      Append(&s, kProfile, q);
      break;
    }
    seeds.emplace_back("profile", s);
  }
  {
    std::string s;
    rpc::LinkProbeRequest q;
    q.set_protocol(v);
    q.set_target("127.0.0.1:6999");
    q.set_bytes(64);
    q.set_count(2);
    q.set_timeout_ms(100);
    Append(&s, kProbeLink, q);
    rpc::SinkMessage m;
    m.set_protocol(v);
    m.set_data("zzzz");
    Append(&s, kSink, m);
    seeds.emplace_back("probelink-sink", s);
  }
  for (const auto& [name, bytes] : seeds) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
  }
}

}  // namespace
}  // namespace shoal

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace shoal;
  // Protobuf logs every string field that is not UTF-8; fuzzed messages
  // are full of them, and the log would cost more than the handlers.
  google::protobuf::SetLogHandler(nullptr);
  h = new Harness;
  grpc::ServerBuilder b;
  b.RegisterService(&h->sink);
  h->sink_server = b.BuildAndStart();
  if (!h->sink_server) Die("cannot start the in-process sink");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  WorkerOptions o;
  o.name = "fuzz";
  o.memory_bytes = int64_t{64} << 20;
  o.max_message_bytes = int64_t{4} << 20;
  o.cache_max_bytes = int64_t{16} << 20;
  o.backend = kDefaultBackend;  // what a device runs
  o.channel = h->sink_server->InProcessChannel(args);
  auto w = Worker::StartInProcess(o);
  if (!w.ok()) Die(w.status().message());
  h->worker = std::move(w).value();
  MakeBaseDeployment(h);
  Redeploy();
  if (const char* dir = std::getenv("SHOAL_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal;
  const std::set<std::string> requests = RunScript(data, size);
  // What one script leaves in flight goes before the next.
  for (const std::string& id : requests) {
    grpc::ServerContext ctx;
    rpc::AbortMessage a;
    a.set_protocol(kProtocolVersion);
    a.set_request(id);
    rpc::Ack ack;
    h->worker->service()->Abort(&ctx, &a, &ack);
  }
  Redeploy();
  return 0;
}
