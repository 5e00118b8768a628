#include "profile/worker_health.h"

namespace shoal {

StatusOr<rpc::HealthReply> WorkerHealth(const DeviceSpec& d,
                                        rpc::Worker::Stub* stub) {
  rpc::HealthRequest req;
  req.set_protocol(kProtocolVersion);
  rpc::HealthReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(3000));
  grpc::Status s = stub->Health(&ctx, req, &rep);
  if (!s.ok()) {
    return FromGrpc(
        s, "device " + d.name + " (" + d.address + ") does not answer");
  }
  return rep;
}

StatusOr<double> WorkerProcessCpu(const DeviceSpec& d,
                                  rpc::Worker::Stub* stub) {
  ASSIGN_OR_RETURN(const rpc::HealthReply rep, WorkerHealth(d, stub));
  return rep.process_cpu_seconds();
}

}  // namespace shoal
