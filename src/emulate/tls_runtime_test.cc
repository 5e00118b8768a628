// Mutual TLS on the runtime (docs/security.md): workers holding device
// certificates run a plan for a coordinator holding a coordinator
// certificate, equal to one device; a client without a certificate, or
// with one of another CA, is refused with a message that says so; a
// device certificate cannot deploy, read statistics or probe; and with TLS
// a worker sends nothing to an endpoint that is no member of the cluster.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/load_model.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "runtime/coordinator.h"
#include "runtime/peer_auth.h"
#include "runtime/runtime_test_util.h"
#include "runtime/wire.h"
#include "runtime/worker.h"
#include "security/certs_test_util.h"
#include "security/openssl_util.h"

namespace shoal {
namespace {

using testing::TempCa;

struct TlsWorkers {
  std::vector<std::unique_ptr<Worker>> workers;
  Cluster cluster;

  TlsWorkers(TempCa& ca, int n) {
    for (int i = 0; i < n; ++i) {
      WorkerOptions o;
      o.name = "dev" + std::to_string(i);
      o.tls = ca.Issue(o.name, TlsRole::kDevice);
      o.metrics_listen = "127.0.0.1:0";
      auto w = Worker::Start(o);
      EXPECT_TRUE(w.ok()) << w.status().message();
      if (!w.ok()) return;
      DeviceSpec d;
      d.name = o.name;
      d.address = "127.0.0.1:" + std::to_string(w.value()->port());
      cluster.devices.push_back(d);
      workers.push_back(std::move(w).value());
    }
  }
};

// shoal_worker_errors_total{kind="unauthorized"} of `w`, or -1, read as a
// monitoring host does: over HTTPS with a coordinator certificate of `ca`
// (with TLS a worker's metrics answer nothing else).
int64_t UnauthorizedCount(const Worker& w, TempCa& ca) {
  auto monitor = std::filesystem::exists(ca.dir + "/monitor.crt")
                     ? ca.Load("monitor")
                     : ca.Issue("monitor", TlsRole::kCoordinator);
  if (!monitor) return -1;
  auto cert = ParseCertPem(monitor->cert_pem, "cert");
  auto pkey = ParseKeyPem(monitor->key_pem, "key");
  if (!cert.ok() || !pkey.ok()) return -1;
  httplib::SSLClient c("127.0.0.1", w.metrics_port(), cert->get(), pkey->get());
  c.enable_server_certificate_verification(false);  // it names dev0
  c.set_read_timeout(5);
  auto r = c.Get("/metrics");
  if (!r || r->status != 200) return -1;
  const std::string key = "shoal_worker_errors_total{kind=\"unauthorized\"} ";
  const size_t at = r->body.find(key);
  return at == std::string::npos ? -1
                                 : std::stoll(r->body.substr(at + key.size()));
}

Model LoadLenet() {
  LoadOptions lo;
  lo.with_weights = true;
  auto m = LoadModel("lenet5", lo);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

Plan LopPlan(const Model& m, int n) {
  PlanOptions po;
  po.strategy = "lop";
  po.devices = testing::EqualDevices(n);
  auto p = MakePlan(m.graph, po);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

// Deploys `plan` with `tls` as the coordinator's identity: the status.
Status DeployWith(const Plan& plan, const Cluster& c, const Model& m,
                  std::shared_ptr<const TlsIdentity> tls) {
  CoordinatorOptions co;
  co.tls = std::move(tls);
  co.timeout_ms = 5000;
  auto coord = Coordinator::Create(plan, c, co);
  if (!coord.ok()) return coord.status();
  return coord.value()->Deploy(m.weights, nullptr);
}

TEST(TlsRuntime, CoordinatorCertificateRunsAPlanEqualToOneDevice) {
  TempCa ca;
  TlsWorkers lc(ca, 2);
  ASSERT_EQ(lc.workers.size(), 2u);
  const Model m = LoadLenet();
  const Plan plan = LopPlan(m, 2);
  CoordinatorOptions co;
  co.tls = ca.Issue("coordinator", TlsRole::kCoordinator);
  auto c = Coordinator::Create(plan, lc.cluster, co);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c.value()->CheckHealth().ok());
  Status s = c.value()->Deploy(m.weights, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  const Tensor x =
      RandomInput(m.graph.tensors.at(m.graph.inputs[0]).shape, /*seed=*/3);
  const Tensor want = testing::RunWholeOrFail(m, x);
  for (int64_t seq = 0; seq < 2; ++seq) {
    Tensor got;
    s = c.value()->Run(x, &got, nullptr, seq);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(MaxRelDiff(got, want), 1e-4);
  }
  auto stats = c.value()->Stats(/*reset=*/true);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_GT((*stats)[1].bytes_received, 0);
}

// A certificate is a device: a worker holding dev1's certificate at the
// address the cluster file gives dev0 (a worker started there with another
// name, or the file's addresses swapped) receives nothing; the refusal
// names both. The same cluster with its addresses right deploys.
TEST(TlsRuntime, AWorkerShowingAnotherDevicesCertificateIsRefused) {
  TempCa ca;
  TlsWorkers lc(ca, 2);
  ASSERT_EQ(lc.workers.size(), 2u);
  const Model m = LoadLenet();
  const Plan plan = LopPlan(m, 2);
  const auto coordinator = ca.Issue("coordinator", TlsRole::kCoordinator);
  Cluster swapped = lc.cluster;
  std::swap(swapped.devices[0].address, swapped.devices[1].address);
  const Status s = DeployWith(plan, swapped, m, coordinator);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the certificate of 'dev"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("not of 'dev"), std::string::npos) << s.message();
  const Status right = DeployWith(plan, lc.cluster, m, coordinator);
  EXPECT_TRUE(right.ok()) << right.message();
}

TEST(TlsRuntime, ClientsWithoutACertificateOfTheCaAreRefused) {
  TempCa ca, other;
  TlsWorkers lc(ca, 1);
  ASSERT_EQ(lc.workers.size(), 1u);
  const Model m = LoadLenet();
  const Plan plan = LopPlan(m, 1);

  Status plain = DeployWith(plan, lc.cluster, m, nullptr);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.message().find("does not answer"), std::string::npos)
      << plain.message();
  EXPECT_NE(plain.message().find("TLS"), std::string::npos) << plain.message();

  Status foreign = DeployWith(
      plan, lc.cluster, m, other.Issue("coordinator", TlsRole::kCoordinator));
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.message().find("TLS handshake failed"), std::string::npos)
      << foreign.message();

  // Nothing reached the worker: it still deploys for its own coordinator.
  EXPECT_TRUE(DeployWith(plan, lc.cluster, m,
                         ca.Issue("coordinator", TlsRole::kCoordinator))
                  .ok());
}

TEST(TlsRuntime, ADeviceCertificateCannotDeployOrReadStatistics) {
  TempCa ca;
  TlsWorkers lc(ca, 1);
  ASSERT_EQ(lc.workers.size(), 1u);
  const Model m = LoadLenet();
  const Plan plan = LopPlan(m, 1);
  auto device = ca.Issue("intruder", TlsRole::kDevice);
  Status s = DeployWith(plan, lc.cluster, m, device);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("refuses"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("coordinator certificate"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("intruder"), std::string::npos) << s.message();

  // Directly, as a peer would: Deploy, Stats, ProbeLink and Send are
  // refused, each counted as unauthorized (Send because no plan deployed
  // here names the device).
  const int64_t refused_before = UnauthorizedCount(*lc.workers[0], ca);
  EXPECT_GE(refused_before, 1);
  auto stub = rpc::Worker::NewStub(
      MakeChannel(lc.cluster.devices[0].address, 1 << 20, device.get()));
  {
    rpc::DeployRequest req;
    req.set_protocol(kProtocolVersion);
    rpc::DeployReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    EXPECT_EQ(stub->Deploy(&ctx, req, &rep).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    rpc::StatsRequest req;
    req.set_protocol(kProtocolVersion);
    req.set_reset(true);
    rpc::StatsReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    EXPECT_EQ(stub->Stats(&ctx, req, &rep).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    rpc::LinkProbeRequest req;
    req.set_protocol(kProtocolVersion);
    req.set_target("127.0.0.1:9");
    req.set_count(1);
    req.set_timeout_ms(1000);
    rpc::LinkProbeReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    EXPECT_EQ(stub->ProbeLink(&ctx, req, &rep).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    rpc::TensorMessage msg;
    msg.set_protocol(kProtocolVersion);
    rpc::Ack ack;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    grpc::Status st = stub->Send(&ctx, msg, &ack);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << st.error_message();
  }
  EXPECT_EQ(UnauthorizedCount(*lc.workers[0], ca), refused_before + 4);
}

// A device certificate of the cluster CA is good only for the devices of
// the plans it is in: with a plan deployed over dev0 and dev1, dev1's
// certificate gets past the check to the plan's own, and one issued to a
// name outside the cluster gets a refusal for Send, Abort and Health, with
// nothing of the plan in it.
TEST(TlsRuntime, ADeviceOutsideThePlansIsRefusedEverything) {
  TempCa ca;
  TlsWorkers lc(ca, 2);
  ASSERT_EQ(lc.workers.size(), 2u);
  const Model m = LoadLenet();
  const Plan plan = LopPlan(m, 2);
  auto coordinator = ca.Issue("coordinator", TlsRole::kCoordinator);
  CoordinatorOptions co;
  co.tls = coordinator;
  co.timeout_ms = 5000;
  auto coord = Coordinator::Create(plan, lc.cluster, co);
  ASSERT_TRUE(coord.ok()) << coord.status().message();
  ASSERT_TRUE(coord.value()->Deploy(m.weights, nullptr).ok());

  const std::string target = lc.cluster.devices[0].address;
  auto send = [&](std::shared_ptr<const TlsIdentity> id) {
    auto stub = rpc::Worker::NewStub(MakeChannel(target, 1 << 20, id.get()));
    rpc::TensorMessage msg;
    msg.set_protocol(kProtocolVersion);
    msg.set_deployment("not-the-plan");
    rpc::Ack ack;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    return stub->Send(&ctx, msg, &ack);
  };
  const grpc::Status member = send(ca.Load("dev1"));
  EXPECT_NE(member.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << member.error_message();
  EXPECT_NE(member.error_message().find("another plan"), std::string::npos)
      << member.error_message();

  const int64_t refused_before = UnauthorizedCount(*lc.workers[0], ca);
  auto stranger = ca.Issue("stranger", TlsRole::kDevice);
  const grpc::Status s = send(stranger);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("stranger"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(s.error_message().find("plan ("), std::string::npos)
      << s.error_message();

  auto stub =
      rpc::Worker::NewStub(MakeChannel(target, 1 << 20, stranger.get()));
  {
    rpc::HealthRequest req;
    req.set_protocol(kProtocolVersion);
    rpc::HealthReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    EXPECT_EQ(stub->Health(&ctx, req, &rep).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(rep.name(), "");
  }
  {
    rpc::AbortMessage req;
    req.set_protocol(kProtocolVersion);
    rpc::Ack rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    EXPECT_EQ(stub->Abort(&ctx, req, &rep).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  EXPECT_EQ(UnauthorizedCount(*lc.workers[0], ca), refused_before + 3);
}

// A coordinator's ProbeLink to an endpoint outside the cluster (a
// plaintext worker, as any host could run, or a worker of another CA)
// fails at the handshake, before any probe bytes; one to a member works.
TEST(TlsRuntime, WithTlsAWorkerProbesOnlyMembers) {
  TempCa ca, other;
  TlsWorkers lc(ca, 2), foreign(other, 1);
  ASSERT_EQ(lc.workers.size(), 2u);
  ASSERT_EQ(foreign.workers.size(), 1u);
  testing::LocalWorkers plaintext(1);
  auto coord = ca.Issue("coordinator", TlsRole::kCoordinator);
  auto stub = rpc::Worker::NewStub(
      MakeChannel(lc.cluster.devices[0].address, 1 << 20, coord.get()));
  auto probe = [&](const std::string& target) {
    rpc::LinkProbeRequest req;
    req.set_protocol(kProtocolVersion);
    req.set_target(target);
    req.set_bytes(1024);
    req.set_count(1);
    req.set_timeout_ms(2000);
    rpc::LinkProbeReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(5000));
    return stub->ProbeLink(&ctx, req, &rep);
  };
  grpc::Status member = probe(lc.cluster.devices[1].address);
  EXPECT_TRUE(member.ok()) << member.error_message();
  EXPECT_FALSE(probe(plaintext.cluster.devices[0].address).ok());
  EXPECT_FALSE(probe(foreign.cluster.devices[0].address).ok());
}

TEST(PeerAuth, LoopbackListenAddresses) {
  EXPECT_TRUE(IsLoopbackListen("127.0.0.1:7000"));
  EXPECT_TRUE(IsLoopbackListen("localhost:7000"));
  EXPECT_TRUE(IsLoopbackListen("[::1]:7000"));
  EXPECT_FALSE(IsLoopbackListen("0.0.0.0:7000"));
  EXPECT_FALSE(IsLoopbackListen("192.168.1.5:7000"));
  EXPECT_FALSE(IsLoopbackListen("[::]:7000"));
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

// A revoked certificate (`shoal certs revoke`) is refused both ways, by
// processes already running: a worker refuses its calls, a coordinator
// refuses to deploy to a worker showing it.
TEST(TlsRuntime, ARevokedCertificateIsRefusedByRunningProcesses) {
  TempCa ca;
  // A list exists from the start, so that every identity below reads it.
  ASSERT_NE(ca.Issue("old-board", TlsRole::kDevice), nullptr);
  ASSERT_TRUE(RevokeCert(ca.dir, "old-board").ok());
  TlsWorkers lc(ca, 2);
  ASSERT_EQ(lc.workers.size(), 2u);
  const Model m = LoadLenet();
  const Plan plan = LopPlan(m, 2);
  auto coordinator = ca.Issue("coordinator", TlsRole::kCoordinator);
  ASSERT_NE(coordinator, nullptr);
  ASSERT_NE(coordinator->revoked, nullptr);
  ASSERT_TRUE(DeployWith(plan, lc.cluster, m, coordinator).ok());

  auto dev1 = ca.Load("dev1");
  ASSERT_NE(dev1, nullptr);
  auto revoked = RevokeCert(ca.dir, "dev1");
  ASSERT_TRUE(revoked.ok()) << revoked.status().message();
  // Lists are read again at most once a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));

  auto stub = rpc::Worker::NewStub(
      MakeChannel(lc.cluster.devices[0].address, 1 << 20, dev1.get()));
  rpc::TensorMessage msg;
  msg.set_protocol(kProtocolVersion);
  rpc::Ack ack;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(3000));
  const grpc::Status s = stub->Send(&ctx, msg, &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("revoked"), std::string::npos)
      << s.error_message();

  const Status d = DeployWith(plan, lc.cluster, m, coordinator);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.message().find("dev1"), std::string::npos) << d.message();
  EXPECT_NE(d.message().find("revoked"), std::string::npos) << d.message();
}

}  // namespace
}  // namespace shoal
