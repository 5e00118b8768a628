// shoal serve with a tls block in its cluster file: it reaches TLS workers
// with the coordinator certificate the block names, answers a client
// showing a coordinator certificate of the cluster CA, and refuses one
// showing a device certificate or none.
#include <gtest/gtest.h>

#include <fstream>

#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/load_model.h"
#include "runtime/runtime_test_util.h"
#include "runtime/worker.h"
#include "security/certs_test_util.h"
#include "serve/client.h"
#include "serve/server.h"

namespace shoal {
namespace {

TEST(ServeTls, AnswersCoordinatorCertificatesOnly) {
  testing::TempCa ca;
  std::vector<std::unique_ptr<Worker>> workers;
  std::string yaml = "tls: {dir: " + ca.dir + "}\ndevices:\n";
  for (int i = 0; i < 2; ++i) {
    WorkerOptions o;
    o.name = "dev" + std::to_string(i);
    o.tls = ca.Issue(o.name, TlsRole::kDevice);
    auto w = Worker::Start(o);
    ASSERT_TRUE(w.ok()) << w.status().message();
    yaml += "  - {name: " + o.name +
            ", address: 127.0.0.1:" + std::to_string(w.value()->port()) + "}\n";
    workers.push_back(std::move(w).value());
  }
  auto coordinator = ca.Issue("coordinator", TlsRole::kCoordinator);
  auto device = ca.Issue("dev9", TlsRole::kDevice);
  ASSERT_TRUE(coordinator && device);
  const std::string file = ca.dir + "/cluster.yaml";
  std::ofstream(file) << yaml;
  ServeOptions so;
  so.cluster_file = file;
  so.model.spec = "lenet5";
  so.listen = "127.0.0.1:0";
  so.strategy = "lop";
  so.rebalance = false;
  so.log_every_s = 1000;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().message();
  const std::string address =
      "127.0.0.1:" + std::to_string(server.value()->port());

  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  const Model m = LoadModel("lenet5", lo).value();
  const Tensor x =
      RandomInput(m.graph.tensors.at(m.graph.inputs[0]).shape, /*seed=*/5);
  const Tensor want = testing::RunWholeOrFail(m, x);

  auto r = ServeClient(address, 0, coordinator.get()).Infer(x, 10000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(MaxRelDiff(r->output, want), 1e-4);

  auto as_device = ServeClient(address, 0, device.get()).Infer(x, 10000);
  ASSERT_FALSE(as_device.ok());
  EXPECT_NE(as_device.status().message().find("coordinator certificate"),
            std::string::npos)
      << as_device.status().message();

  auto plain = ServeClient(address).Infer(x, 3000);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("TLS"), std::string::npos)
      << plain.status().message();
  server.value()->Shutdown();
}

}  // namespace
}  // namespace shoal
