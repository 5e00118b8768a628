// DNS-SD through avahi-daemon (libavahi-client, over D-Bus): the one file
// of shoal that includes Avahi (src/discovery/dns_sd.h).
#include <arpa/inet.h>
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "discovery/dns_sd.h"

namespace shoal {
namespace {

// How often a worker tries again to reach an avahi-daemon that is not up.
constexpr int kRetryMs = 5000;
constexpr const char* kHowToStart =
    "start it with `systemctl start avahi-daemon` (or `avahi-daemon -D`)";

std::string WhyUnreachable(int err) {
  if (err == AVAHI_ERR_NO_DAEMON) {
    return "avahi-daemon is not running (or the D-Bus system bus it answers "
           "on is not)";
  }
  return std::string("avahi-daemon cannot be reached: ") + avahi_strerror(err);
}

// The interface holding the IP `host`; any interface for a wildcard or an
// address no interface holds.
AvahiIfIndex InterfaceOf(const std::string& host) {
  if (host.empty() || host == "0.0.0.0" || host == "::") return AVAHI_IF_UNSPEC;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return AVAHI_IF_UNSPEC;
  AvahiIfIndex found = AVAHI_IF_UNSPEC;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    char ip[INET6_ADDRSTRLEN] = "";
    if (i->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr,
                ip, sizeof(ip));
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6,
                &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, ip,
                sizeof(ip));
    }
    if (host == ip) {
      found = static_cast<AvahiIfIndex>(if_nametoindex(i->ifa_name));
      break;
    }
  }
  freeifaddrs(list);
  return found;
}

// Announces one service from a thread of Avahi's own (its threaded poll);
// every callback below runs there, with the poll's lock held.
class AvahiAnnouncement : public DnsSdAnnouncement {
 public:
  AvahiAnnouncement(DnsSdService s, std::function<void(const std::string&)> log)
      : s_(std::move(s)),
        name_(s_.instance),
        iface_(InterfaceOf(s_.listen_host)),
        log_(std::move(log)) {}

  bool Start() {
    poll_ = avahi_threaded_poll_new();
    if (poll_ == nullptr) {
      log_("not announcing " + s_.instance +
           " on the network: Avahi's event loop cannot be created");
      return false;
    }
    Connect();  // before the thread runs: nothing to lock yet
    if (avahi_threaded_poll_start(poll_) < 0) {
      log_("not announcing " + s_.instance +
           " on the network: Avahi's thread cannot be started");
      return false;
    }
    return true;
  }

  ~AvahiAnnouncement() override {
    if (poll_ == nullptr) return;
    avahi_threaded_poll_stop(poll_);
    const AvahiPoll* api = avahi_threaded_poll_get(poll_);
    if (retry_ != nullptr) api->timeout_free(retry_);
    // Freeing the group withdraws the service (goodbye packets).
    if (group_ != nullptr) avahi_entry_group_free(group_);
    if (client_ != nullptr) avahi_client_free(client_);
    avahi_threaded_poll_free(poll_);
  }

 private:
  void Connect() {
    int err = 0;
    // NO_FAIL: with D-Bus up but not the daemon, wait for it to appear.
    AvahiClient* c =
        avahi_client_new(avahi_threaded_poll_get(poll_), AVAHI_CLIENT_NO_FAIL,
                         &ClientCb, this, &err);
    if (c == nullptr) {
      NotAnnouncing(WhyUnreachable(err));
      RetryLater();
      return;
    }
    client_ = c;
  }

  // Logged once until the service is announced again.
  void NotAnnouncing(const std::string& why) {
    if (warned_) return;
    warned_ = true;
    log_("not announcing " + s_.instance + " on the network (DNS-SD): " + why +
         "; " + kHowToStart +
         ". The worker serves all the same and announces itself once the "
         "daemon runs; shoal cluster scan does not list it until then "
         "(--no-announce turns announcing off)");
  }

  void RetryLater() {
    const AvahiPoll* api = avahi_threaded_poll_get(poll_);
    timeval tv;
    avahi_elapse_time(&tv, kRetryMs, 0);
    if (retry_ == nullptr) {
      retry_ = api->timeout_new(api, &tv, &RetryCb, this);
    } else {
      api->timeout_update(retry_, &tv);
    }
  }

  // A client that failed is freed outside its own callback, here.
  static void RetryCb(AvahiTimeout*, void* self_ptr) {
    auto* self = static_cast<AvahiAnnouncement*>(self_ptr);
    if (self->group_ != nullptr) avahi_entry_group_free(self->group_);
    self->group_ = nullptr;
    if (self->client_ != nullptr) avahi_client_free(self->client_);
    self->client_ = nullptr;
    self->Connect();
  }

  static void ClientCb(AvahiClient* c, AvahiClientState state, void* self_ptr) {
    auto* self = static_cast<AvahiAnnouncement*>(self_ptr);
    switch (state) {
      case AVAHI_CLIENT_S_RUNNING:
        self->AddService(c);
        break;
      case AVAHI_CLIENT_S_COLLISION:
      case AVAHI_CLIENT_S_REGISTERING:
        // The host's own name is being (re)established: announce after.
        if (self->group_ != nullptr) avahi_entry_group_reset(self->group_);
        break;
      case AVAHI_CLIENT_CONNECTING:
        self->NotAnnouncing("avahi-daemon is not running");
        break;
      case AVAHI_CLIENT_FAILURE:
        self->warned_ = false;  // it worked before: say that it stopped
        self->NotAnnouncing(WhyUnreachable(avahi_client_errno(c)));
        self->RetryLater();
        break;
    }
  }

  void AddService(AvahiClient* c) {
    if (group_ == nullptr) {
      group_ = avahi_entry_group_new(c, &GroupCb, this);
      if (group_ == nullptr) {
        log_("not announcing " + s_.instance + ": " +
             avahi_strerror(avahi_client_errno(c)));
        return;
      }
    }
    if (!avahi_entry_group_is_empty(group_)) return;
    AvahiStringList* txt = nullptr;
    for (auto it = s_.txt.rbegin(); it != s_.txt.rend(); ++it) {
      txt = avahi_string_list_add(txt, it->c_str());  // prepends
    }
    int r = avahi_entry_group_add_service_strlst(
        group_, iface_, AVAHI_PROTO_UNSPEC, static_cast<AvahiPublishFlags>(0),
        name_.c_str(), s_.type.c_str(), nullptr, nullptr,
        static_cast<uint16_t>(s_.port), txt);
    avahi_string_list_free(txt);
    if (r == AVAHI_ERR_COLLISION) {
      Rename();
      AddService(c);
      return;
    }
    if (r >= 0) r = avahi_entry_group_commit(group_);
    if (r < 0) {
      log_("not announcing " + s_.instance + ": " + avahi_strerror(r));
    }
  }

  void Rename() {
    char* alt = avahi_alternative_service_name(name_.c_str());
    log_("another service on the network is named '" + name_ +
         "'; announcing this worker as '" + alt +
         "' (give each device its own --name)");
    name_ = alt;
    avahi_free(alt);
  }

  static void GroupCb(AvahiEntryGroup* g, AvahiEntryGroupState state,
                      void* self_ptr) {
    auto* self = static_cast<AvahiAnnouncement*>(self_ptr);
    switch (state) {
      case AVAHI_ENTRY_GROUP_ESTABLISHED:
        self->warned_ = false;
        self->log_("announcing " + self->name_ + " on the network as " +
                   self->s_.type + ", port " + std::to_string(self->s_.port) +
                   " (DNS-SD through avahi-daemon)");
        break;
      case AVAHI_ENTRY_GROUP_COLLISION:
        self->Rename();
        avahi_entry_group_reset(g);
        self->AddService(avahi_entry_group_get_client(g));
        break;
      case AVAHI_ENTRY_GROUP_FAILURE:
        self->log_("announcing " + self->name_ + " failed: " +
                   avahi_strerror(
                       avahi_client_errno(avahi_entry_group_get_client(g))));
        break;
      default:
        break;
    }
  }

  const DnsSdService s_;
  std::string name_;  // s_.instance, or what it was renamed to
  const AvahiIfIndex iface_;
  std::function<void(const std::string&)> log_;
  AvahiThreadedPoll* poll_ = nullptr;
  AvahiClient* client_ = nullptr;
  AvahiEntryGroup* group_ = nullptr;
  AvahiTimeout* retry_ = nullptr;
  bool warned_ = false;
};

// A browse on the caller's thread (Avahi's simple poll).
struct Browse {
  AvahiClient* client = nullptr;
  std::map<std::string, DnsSdFound> found;  // by instance name
  std::string failure;
};

void ResolveCb(AvahiServiceResolver* r, AvahiIfIndex, AvahiProtocol,
               AvahiResolverEvent event, const char* name, const char*,
               const char*, const char* host, const AvahiAddress* address,
               uint16_t port, AvahiStringList* txt, AvahiLookupResultFlags,
               void* browse_ptr) {
  auto* b = static_cast<Browse*>(browse_ptr);
  auto it = b->found.find(name);
  // One instance is seen on each interface and IP version: the first
  // address wins.
  if (it != b->found.end() && it->second.address.empty()) {
    DnsSdFound& f = it->second;
    if (event == AVAHI_RESOLVER_FOUND) {
      char ip[AVAHI_ADDRESS_STR_MAX];
      avahi_address_snprint(ip, sizeof(ip), address);
      f.host = host;
      f.address = ip;
      f.port = port;
      f.txt.clear();
      for (AvahiStringList* t = txt; t != nullptr;
           t = avahi_string_list_get_next(t)) {
        f.txt.emplace_back(
            reinterpret_cast<const char*>(avahi_string_list_get_text(t)),
            avahi_string_list_get_size(t));
      }
      // TXT order is the announcer's; Avahi hands it back reversed.
      std::reverse(f.txt.begin(), f.txt.end());
      f.error.clear();
    } else {
      f.error = std::string(
                    "announced, but its IPv4 address and port did "
                    "not resolve: ") +
                avahi_strerror(avahi_client_errno(b->client));
    }
  }
  avahi_service_resolver_free(r);
}

void BrowseCb(AvahiServiceBrowser*, AvahiIfIndex iface, AvahiProtocol proto,
              AvahiBrowserEvent event, const char* name, const char* type,
              const char* domain, AvahiLookupResultFlags, void* browse_ptr) {
  auto* b = static_cast<Browse*>(browse_ptr);
  switch (event) {
    case AVAHI_BROWSER_NEW: {
      DnsSdFound& f = b->found[name];
      if (!f.address.empty()) break;
      f.instance = name;
      if (f.error.empty()) {
        f.error = "announced, but did not answer with its address in time";
      }
      // Addresses of IPv4 only: an IPv6 link-local one needs its interface
      // named in every address that uses it.
      if (avahi_service_resolver_new(
              b->client, iface, proto, name, type, domain, AVAHI_PROTO_INET,
              static_cast<AvahiLookupFlags>(0), &ResolveCb, b) == nullptr) {
        f.error = std::string("announced, but cannot be resolved: ") +
                  avahi_strerror(avahi_client_errno(b->client));
      }
      break;
    }
    case AVAHI_BROWSER_REMOVE:
      // Withdrawn (a worker that stopped): not there any more.
      b->found.erase(name);
      break;
    case AVAHI_BROWSER_FAILURE:
      b->failure = avahi_strerror(avahi_client_errno(b->client));
      break;
    default:
      break;
  }
}

void BrowseClientCb(AvahiClient* c, AvahiClientState state, void* browse_ptr) {
  auto* b = static_cast<Browse*>(browse_ptr);
  if (state == AVAHI_CLIENT_FAILURE) {
    b->failure = WhyUnreachable(avahi_client_errno(c));
  }
}

}  // namespace

std::unique_ptr<DnsSdAnnouncement> StartAnnouncing(
    const DnsSdService& service, std::function<void(const std::string&)> log) {
  auto a = std::make_unique<AvahiAnnouncement>(service, std::move(log));
  if (!a->Start()) return nullptr;
  return a;
}

StatusOr<std::vector<DnsSdFound>> BrowseDnsSd(const std::string& type,
                                              double seconds) {
  std::unique_ptr<AvahiSimplePoll, void (*)(AvahiSimplePoll*)> poll(
      avahi_simple_poll_new(), &avahi_simple_poll_free);
  if (poll == nullptr) return Internal("Avahi's event loop cannot be created");
  Browse b;
  int err = 0;
  std::unique_ptr<AvahiClient, void (*)(AvahiClient*)> client(
      avahi_client_new(avahi_simple_poll_get(poll.get()),
                       static_cast<AvahiClientFlags>(0), &BrowseClientCb, &b,
                       &err),
      &avahi_client_free);
  if (client == nullptr) {
    return Unavailable(WhyUnreachable(err) +
                       ", and DNS-SD needs it to find "
                       "workers: " +
                       kHowToStart + ", then scan again");
  }
  b.client = client.get();
  if (avahi_service_browser_new(client.get(), AVAHI_IF_UNSPEC,
                                AVAHI_PROTO_UNSPEC, type.c_str(), nullptr,
                                static_cast<AvahiLookupFlags>(0), &BrowseCb,
                                &b) == nullptr) {
    return Unavailable(std::string("avahi-daemon does not browse for ") + type +
                       ": " + avahi_strerror(avahi_client_errno(client.get())));
  }
  // Answers come as hosts hear the query (a board on Wi-Fi in power save
  // can take a second or more): browse for the whole time given.
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds));
  while (b.failure.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          end - Clock::now())
                          .count();
    if (left <= 0) break;
    if (avahi_simple_poll_iterate(
            poll.get(), static_cast<int>(std::min<int64_t>(left, 200))) != 0) {
      break;
    }
  }
  if (!b.failure.empty()) {
    return Unavailable("browsing for " + type + " failed: " + b.failure);
  }
  std::vector<DnsSdFound> out;
  for (auto& [name, f] : b.found) out.push_back(std::move(f));
  return out;
}

}  // namespace shoal
