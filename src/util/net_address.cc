#include "util/net_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace shoal {

namespace {

// The resolver's answer, shared with a thread that may outlive the caller
// when the lookup takes longer than the caller waits.
struct Lookup {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
  sockaddr_storage addr{};
  socklen_t len = 0;
};

StatusOr<std::pair<sockaddr_storage, socklen_t>> ResolveSockaddr(
    const std::string& host, int64_t timeout_ms, const std::string& what) {
  auto l = std::make_shared<Lookup>();
  std::thread([l, host] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
    std::lock_guard<std::mutex> lock(l->mu);
    l->rc = rc;
    if (rc == 0) {
      // Prefer IPv4: a home network's boards all have one, not all have a
      // routable IPv6 address.
      const addrinfo* pick = res;
      for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
        if (a->ai_family == AF_INET) {
          pick = a;
          break;
        }
      }
      std::memcpy(&l->addr, pick->ai_addr, pick->ai_addrlen);
      l->len = pick->ai_addrlen;
      freeaddrinfo(res);
    }
    l->done = true;
    l->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(l->mu);
  if (!l->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return l->done; })) {
    return Status(Code::kDeadlineExceeded,
                  what + ": the name " + host + " did not resolve within " +
                      std::to_string(timeout_ms) + " ms");
  }
  if (l->rc != 0) {
    return Unavailable(what + ": the name " + host +
                       " does not resolve: " + gai_strerror(l->rc));
  }
  return std::make_pair(l->addr, l->len);
}

std::string IpString(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf,
              sizeof(buf));
  } else {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
              buf, sizeof(buf));
  }
  return buf;
}

}  // namespace

StatusOr<HostPort> SplitHostPort(const std::string& s,
                                 const std::string& what) {
  HostPort hp;
  std::string rest;
  if (!s.empty() && s[0] == '[') {
    const auto close = s.find(']');
    if (close == std::string::npos) {
      return InvalidArgument(what + " '" + s + "' has '[' without ']'");
    }
    hp.host = s.substr(1, close - 1);
    rest = s.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') {
      return InvalidArgument(what + " '" + s + "': expected ':PORT' after ']'");
    }
  } else {
    const auto colon = s.find(':');
    if (colon != std::string::npos &&
        s.find(':', colon + 1) != std::string::npos) {
      return InvalidArgument(what + " '" + s +
                             "': write an IPv6 address as [ADDRESS]:PORT");
    }
    hp.host = s.substr(0, colon);
    if (colon != std::string::npos) rest = s.substr(colon);
  }
  if (hp.host.empty()) {
    return InvalidArgument(what + " '" + s + "' has no host");
  }
  if (!rest.empty()) {
    const std::string p = rest.substr(1);
    char* end = nullptr;
    errno = 0;
    const long v = p.empty() ? -1 : std::strtol(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || errno != 0 || v < 0 || v > 65535) {
      return InvalidArgument(what + " '" + s + "' has a bad port '" + p +
                             "' (0 to 65535)");
    }
    hp.port = static_cast<int>(v);
  }
  return hp;
}

std::string JoinHostPort(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

StatusOr<std::string> ResolveHost(const std::string& host, int64_t timeout_ms,
                                  const std::string& what) {
  ASSIGN_OR_RETURN(auto sa, ResolveSockaddr(host, timeout_ms, what));
  return IpString(sa.first);
}

StatusOr<std::string> LocalAddressToward(const std::string& address,
                                         int64_t timeout_ms,
                                         const std::string& what) {
  ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(address, what));
  if (hp.port < 0) {
    return InvalidArgument(what + " '" + address + "' has no port");
  }
  ASSIGN_OR_RETURN(auto sa, ResolveSockaddr(hp.host, timeout_ms, what));
  sockaddr_storage& a = sa.first;
  if (a.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in&>(a).sin_port = htons(hp.port);
  } else {
    reinterpret_cast<sockaddr_in6&>(a).sin6_port = htons(hp.port);
  }
  const int fd = socket(a.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) return Unavailable(std::string("socket: ") + strerror(errno));
  // A UDP connect only picks the route and the source address.
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sa.second) != 0) {
    const int err = errno;
    close(fd);
    return Unavailable(what + " " + address + " (" + IpString(a) +
                       ") has no route from this machine: " + strerror(err));
  }
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  const int rc = getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  const int err = errno;
  close(fd);
  if (rc != 0) return Unavailable(std::string("getsockname: ") + strerror(err));
  return IpString(local);
}

StatusOr<ReplyEndpoint> ChooseReplyEndpoint(
    const std::string& advertise, const std::string& first_worker,
    const std::string& first_worker_name) {
  constexpr int64_t kResolveMs = 5000;
  ReplyEndpoint e;
  if (advertise.empty()) {
    ASSIGN_OR_RETURN(
        e.listen_host,
        LocalAddressToward(first_worker, kResolveMs,
                           "device " + first_worker_name + "'s address"));
    e.advertise_host = e.listen_host;
    return e;
  }
  ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(advertise, "--advertise"));
  ASSIGN_OR_RETURN(e.listen_host,
                   ResolveHost(hp.host, kResolveMs, "--advertise"));
  e.advertise_host = hp.host;
  e.port = std::max(0, hp.port);
  return e;
}

StatusOr<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Unavailable(std::string("socket: ") + strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  const int err = errno;
  close(fd);
  if (port == 0) {
    return Unavailable(std::string("no free port on 127.0.0.1: ") +
                       strerror(err));
  }
  return port;
}

void UseSystemResolver() {
  // setenv's last argument 0: a value the user set stays.
  setenv("GRPC_DNS_RESOLVER", "native", 0);
}

}  // namespace shoal
