// The coordinator's state, shared by the files that implement it: its
// creation (coordinator.cc), deployment (coordinator_deploy.cc), requests
// (coordinator_run.cc), statistics (coordinator_stats.cc) and the endpoint
// the workers call back, with what it learns of lost devices
// (coordinator_service.cc). Internal to runtime/: nothing outside includes
// it.
#ifndef SHOAL_RUNTIME_COORDINATOR_IMPL_H_
#define SHOAL_RUNTIME_COORDINATOR_IMPL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "plan/dataflow.h"
#include "runtime/connection_watch.h"
#include "runtime/coordinator.h"
#include "runtime/device_probe.h"
#include "runtime/link_shaper.h"
#include "runtime/wire.h"

namespace shoal {

// A request waiting for its output.
struct PendingRequest {
  Tensor output;
  int parts_left = 0;
  Status error;
  std::vector<bool> uses;  // per plan device: runs a task of this request
  // Its input is sent: from now on its devices are probed (DeviceProbe),
  // not while a probe could queue behind the input's bytes on the link.
  bool awaiting = false;
  bool done() const { return parts_left == 0 || !error.ok(); }
};

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
  std::map<std::string, std::shared_ptr<PendingRequest>> pending;
  Status cancelled;          // set by Cancel(): every request fails with it
  std::vector<char> silent;  // per device: the probe found it silent once
  // Last: destroyed first, so that their threads never see the rest gone.
  std::unique_ptr<ConnectionWatch> watch;
  std::unique_ptr<DeviceProbe> probe;

  std::string DeviceName(int d) const {
    return "device " + devs[d].name + " (" + devs[d].address + ")";
  }
  const TlsIdentity* tls() const { return opts.tls.get(); }

  // Sends request `seq`'s input messages, (device, message) in order
  // (coordinator_run.cc).
  Status SendInputs(const Plan& p,
                    std::vector<std::pair<int, rpc::TensorMessage>>* sends,
                    std::chrono::steady_clock::time_point expiry, int64_t seq);

  // What the coordinator learns of its devices (coordinator_service.cc).
  std::vector<bool> DevicesInUse();
  void DeviceSilent(int d, const std::string& what);
  void DeviceLost(int d, const std::string& what);
  bool StillHoldsDeployment(int d);
  std::string Unreachable();

  // The endpoint the workers call (coordinator_service.cc).
  grpc::Status Health(grpc::ServerContext* ctx, const rpc::HealthRequest*,
                      rpc::HealthReply* rep) override;
  grpc::Status Send(grpc::ServerContext* ctx, const rpc::TensorMessage* m,
                    rpc::Ack*) override;
  grpc::Status Sink(grpc::ServerContext* ctx, const rpc::SinkMessage* m,
                    rpc::Ack*) override;
  grpc::Status Abort(grpc::ServerContext* ctx, const rpc::AbortMessage* m,
                     rpc::Ack*) override;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_COORDINATOR_IMPL_H_
