// Every RPC handler's body runs inside GuardRpc: an exception (a bug, or an
// input no check foresaw) becomes a status naming the process and the RPC,
// where gRPC's own catch says only "Unexpected error in RPC handling".
#ifndef SHOAL_RUNTIME_RPC_GUARD_H_
#define SHOAL_RUNTIME_RPC_GUARD_H_

#include <grpcpp/grpcpp.h>

#include <exception>
#include <new>
#include <string>

namespace shoal {

template <typename F>
grpc::Status GuardRpc(const std::string& who, const char* rpc, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        who + ": " + rpc + " ran out of memory");
  } catch (const std::exception& e) {
    return grpc::Status(
        grpc::StatusCode::INTERNAL,
        who + ": " + rpc + " failed on an unexpected condition: " + e.what());
  }
}

}  // namespace shoal

#endif  // SHOAL_RUNTIME_RPC_GUARD_H_
