// An enrolled board's certificate opens a TLS worker to the cluster's
// coordinator (docs/security.md, "Enrolment"): enroll_test.cc's fixture,
// here because the worker and the coordinator (runtime) are not below
// enroll; cli is the one stage that builds on both.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "enroll/enroll_test_util.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/load_model.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "runtime/coordinator.h"
#include "runtime/runtime_test_util.h"
#include "runtime/worker.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

TEST_F(Enrolment, ABoardsCertificateServesATlsWorkerToTheCoordinator) {
  auto p = EnrollAs("dev0", Token("dev0"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  struct stat st {};
  ASSERT_EQ(stat(p->key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The CA keeps the certificate (for `revoke`), never a key.
  EXPECT_TRUE(fs::exists(ca_.dir + "/dev0.crt"));
  EXPECT_FALSE(fs::exists(ca_.dir + "/dev0.key"));

  auto id = LoadTlsIdentity(*p);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(id.value()->name, "dev0");
  EXPECT_EQ(id.value()->role, TlsRole::kDevice);
  WorkerOptions wo;
  wo.name = "dev0";
  wo.tls = id.value();
  auto w = Worker::Start(wo);
  ASSERT_TRUE(w.ok()) << w.status().message();
  Cluster cluster;
  DeviceSpec d;
  d.name = "dev0";
  d.address = "127.0.0.1:" + std::to_string(w.value()->port());
  cluster.devices.push_back(d);

  LoadOptions lo;
  lo.with_weights = true;
  auto m = LoadModel("lenet5", lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  PlanOptions po;
  po.strategy = "lop";
  po.devices = testing::EqualDevices(1);
  auto plan = MakePlan(m->graph, po);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  CoordinatorOptions co;
  co.tls = ca_.Issue("coordinator", TlsRole::kCoordinator);
  co.timeout_ms = 5000;
  auto c = Coordinator::Create(*plan, cluster, co);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c.value()->CheckHealth().ok());
  Status s = c.value()->Deploy(m->weights, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  const Tensor x =
      RandomInput(m->graph.tensors.at(m->graph.inputs[0]).shape, /*seed=*/3);
  Tensor got;
  s = c.value()->Run(x, &got, nullptr, 0);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LE(MaxRelDiff(got, testing::RunWholeOrFail(*m, x)), 1e-4);
}

}  // namespace
}  // namespace shoal
