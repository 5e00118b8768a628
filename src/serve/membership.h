// The devices of the cluster file as `shoal serve`'s monitor sees them, and
// the health checks that move them between states: serving (in the current
// plan), joining (answers, not yet in a plan), down, removed (no longer in
// the cluster file). The monitor thread changes them; the status reply
// reads their states under the server's lock, so every state change takes
// `state_mu`.
#ifndef SHOAL_SERVE_MEMBERSHIP_H_
#define SHOAL_SERVE_MEMBERSHIP_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "security/tls_identity.h"
#include "shoal.grpc.pb.h"
#include "util/status.h"

namespace shoal {

struct Member {
  enum State { kServing, kJoining, kDown, kRemoved };
  DeviceSpec spec;
  State state = kDown;
  int64_t uptime_ms = -1;
  // The deployment its last Health reply named ("" none): serve compares
  // it with the current plan's to find a device that lost its deployment.
  std::string deployment;
  std::string why;  // the last health error
  std::unique_ptr<rpc::Worker::Stub> stub;
  std::shared_ptr<const TlsIdentity> tls;  // null: plaintext
};

const char* StateName(Member::State s);

// A member for a device of the cluster file, down until it answers.
Member MakeMember(const DeviceSpec& d, std::shared_ptr<const TlsIdentity> tls);

// One Health call (1 s deadline): the device's reply, or why not.
StatusOr<rpc::HealthReply> MemberHealth(Member& m);

// Makes `devices` the members: those no longer among them are removed
// (events say so, naming `source`, where the list came from), listed again
// they are down until they answer, new ones are added (down until the next
// check; `log` says so). New members dial with `tls` (the identity serve
// started with).
void ApplyMembers(const std::vector<DeviceSpec>& devices,
                  const std::string& source,
                  std::shared_ptr<const TlsIdentity> tls,
                  std::vector<Member>* members, std::mutex& state_mu,
                  std::vector<std::string>* events,
                  std::vector<std::string>* log);

// Re-reads `cluster_file` and applies its devices, and beside them the
// workers DNS-SD found (`found`; null without --discover), as ApplyMembers
// does. An unreadable file keeps the members as they are and `log` says
// why.
void ReloadMembers(const std::string& cluster_file,
                   const std::vector<DeviceSpec>* found,
                   std::shared_ptr<const TlsIdentity> tls,
                   std::vector<Member>* members, std::mutex& state_mu,
                   std::vector<std::string>* events,
                   std::vector<std::string>* log);

// Health of every member: a serving device that fails twice in a row (200
// ms apart) has left; one whose uptime went back has restarted and lost
// its plan; a down device that answers joins. Returns whether the current
// plan can no longer serve every request.
bool CheckMembers(std::vector<Member>* members, std::mutex& state_mu,
                  std::vector<std::string>* events);

}  // namespace shoal

#endif  // SHOAL_SERVE_MEMBERSHIP_H_
