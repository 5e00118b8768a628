// Network addresses as devices on a real network use them: HOST:PORT
// strings, names resolved by the system resolver (getaddrinfo, so
// /etc/hosts, DNS and mDNS through nss-mdns all work: `pi-kitchen.local`),
// and the address a coordinator tells its workers to reply to.
#ifndef SHOAL_UTIL_NET_ADDRESS_H_
#define SHOAL_UTIL_NET_ADDRESS_H_

#include <cstdint>
#include <string>

#include "util/status.h"

namespace shoal {

struct HostPort {
  std::string host;  // a name or an IP literal, without IPv6's brackets
  int port = -1;     // -1: none given
};

// Splits "HOST:PORT", "HOST", "[V6]:PORT" or "[V6]". `what` names the
// string in errors ("device pi1's address").
StatusOr<HostPort> SplitHostPort(const std::string& s, const std::string& what);

// HOST:PORT with brackets around an IPv6 literal, as gRPC wants it.
std::string JoinHostPort(const std::string& host, int port);

// The first address of `host` by the system resolver, as an IP literal.
// Waits at most `timeout_ms` (an mDNS name of a board that is off can take
// seconds to fail); the error names `what` and the host.
StatusOr<std::string> ResolveHost(const std::string& host, int64_t timeout_ms,
                                  const std::string& what);

// The local IP this machine would use to reach `address` (HOST:PORT): the
// source address the kernel picks for its route, found by connecting a UDP
// socket, which sends nothing.
StatusOr<std::string> LocalAddressToward(const std::string& address,
                                         int64_t timeout_ms,
                                         const std::string& what);

// Where a coordinator (run, bench, serve, profile) listens for what workers
// send it, and the address it gives them. With `advertise` empty: the local
// address of its route to `first_worker`, any free port. With
// `advertise` = HOST[:PORT]: listen on HOST's address (port 0: any free
// port) and advertise HOST as written, so a name the workers resolve
// themselves stays a name.
struct ReplyEndpoint {
  std::string listen_host;     // an IP literal of this machine
  int port = 0;                // 0: any free port
  std::string advertise_host;  // what the workers are told
};
StatusOr<ReplyEndpoint> ChooseReplyEndpoint(
    const std::string& advertise, const std::string& first_worker,
    const std::string& first_worker_name);

// A port on 127.0.0.1 that nothing listens on now (the kernel's choice for
// port 0, released again).
StatusOr<int> FreeLoopbackPort();

// Makes gRPC resolve names with getaddrinfo (its "native" resolver), so a
// worker named `pi.local` is found through nsswitch and mDNS; c-ares, the
// default, asks DNS servers only. Call before the first channel is made;
// an explicit GRPC_DNS_RESOLVER in the environment wins.
void UseSystemResolver();

}  // namespace shoal

#endif  // SHOAL_UTIL_NET_ADDRESS_H_
