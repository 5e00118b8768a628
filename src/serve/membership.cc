#include "serve/membership.h"

#include <chrono>
#include <thread>

#include "runtime/peer_auth.h"
#include "runtime/wire.h"

namespace shoal {

const char* StateName(Member::State s) {
  switch (s) {
    case Member::kServing:
      return "serving";
    case Member::kJoining:
      return "joining";
    case Member::kDown:
      return "down";
    case Member::kRemoved:
      return "removed";
  }
  return "?";
}

Member MakeMember(const DeviceSpec& d, std::shared_ptr<const TlsIdentity> tls) {
  Member m;
  m.spec = d;
  m.tls = std::move(tls);
  m.stub = rpc::Worker::NewStub(MakeChannel(d.address, 1 << 20, m.tls.get()));
  return m;
}

StatusOr<rpc::HealthReply> MemberHealth(Member& m) {
  rpc::HealthRequest req;
  req.set_protocol(kProtocolVersion);
  rpc::HealthReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(1000));
  grpc::Status s = m.stub->Health(&ctx, req, &rep);
  if (!s.ok()) {
    return FromGrpc(s, "device " + m.spec.name + " (" + m.spec.address +
                           ") does not answer" + TlsHint(s, m.tls != nullptr));
  }
  if (rep.protocol() != kProtocolVersion) {
    return FailedPrecondition("device " + m.spec.name +
                              " speaks shoal protocol version " +
                              std::to_string(rep.protocol()) + ", not " +
                              std::to_string(kProtocolVersion));
  }
  return rep;
}

void ApplyMembers(const std::vector<DeviceSpec>& devices,
                  const std::string& source,
                  std::shared_ptr<const TlsIdentity> tls,
                  std::vector<Member>* members, std::mutex& state_mu,
                  std::vector<std::string>* events,
                  std::vector<std::string>* log) {
  for (auto& m : *members) {
    bool listed = false;
    for (const auto& d : devices) {
      listed |= d.name == m.spec.name && d.address == m.spec.address;
    }
    if (!listed && m.state != Member::kRemoved) {
      events->push_back("device " + m.spec.name + " is no longer in " + source);
      std::lock_guard<std::mutex> lock(state_mu);
      m.state = Member::kRemoved;
    }
  }
  for (const auto& d : devices) {
    bool known = false;
    for (auto& m : *members) {
      if (m.spec.name == d.name && m.spec.address == d.address) {
        known = true;
        if (m.state == Member::kRemoved) {
          std::lock_guard<std::mutex> lock(state_mu);
          m.state = Member::kDown;  // listed again: joins when it answers
        }
      }
    }
    if (!known) {
      log->push_back(source + " lists a new device " + d.name + " (" +
                     d.address + ")");
      Member m = MakeMember(d, tls);
      std::lock_guard<std::mutex> lock(state_mu);
      members->push_back(std::move(m));
    }
  }
}

void ReloadMembers(const std::string& cluster_file,
                   const std::vector<DeviceSpec>* found,
                   std::shared_ptr<const TlsIdentity> tls,
                   std::vector<Member>* members, std::mutex& state_mu,
                   std::vector<std::string>* events,
                   std::vector<std::string>* log) {
  auto c = LoadCluster(cluster_file);
  if (!c.ok()) {
    log->push_back(
        "cannot re-read " + cluster_file +
        ", keeping the devices as they are: " + c.status().message());
    return;
  }
  std::vector<DeviceSpec> devices = c->devices;
  std::string source = cluster_file;
  if (found != nullptr) {
    source += " or DNS-SD";
    for (const auto& d : *found) {
      bool listed = false;
      for (const auto& f : c->devices) listed |= f.name == d.name;
      if (!listed) devices.push_back(d);  // the file's own entry wins
    }
  }
  ApplyMembers(devices, source, std::move(tls), members, state_mu, events, log);
}

bool CheckMembers(std::vector<Member>* members, std::mutex& state_mu,
                  std::vector<std::string>* events) {
  bool broken = false;
  for (auto& m : *members) {
    if (m.state == Member::kRemoved) continue;
    // A channel backing off from a device that was down could take minutes
    // to try again: check a down device on a fresh one.
    if (m.state == Member::kDown) {
      m.stub = rpc::Worker::NewStub(
          MakeChannel(m.spec.address, 1 << 20, m.tls.get()));
    }
    auto up = MemberHealth(m);
    if (!up.ok() && m.state == Member::kServing) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      up = MemberHealth(m);
    }
    std::lock_guard<std::mutex> lock(state_mu);
    if (!up.ok()) {
      m.why = up.status().message();
      if (m.state == Member::kServing) {
        events->push_back("device " + m.spec.name + " left: " + m.why);
        broken = true;
      }
      m.state = Member::kDown;
      continue;
    }
    const bool restarted = m.uptime_ms >= 0 && up->uptime_ms() < m.uptime_ms;
    m.uptime_ms = up->uptime_ms();
    m.deployment = up->deployment();
    if (m.state == Member::kServing && restarted) {
      events->push_back("device " + m.spec.name +
                        " restarted and lost its plan");
      broken = true;
    } else if (m.state == Member::kDown) {
      events->push_back("device " + m.spec.name + " joined (answers at " +
                        m.spec.address + ")");
      m.state = Member::kJoining;
    }
  }
  return broken;
}

}  // namespace shoal
