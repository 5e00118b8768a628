// DNS-SD (zero-configuration service discovery over multicast DNS): a
// worker announces itself and `shoal cluster scan` browses for workers.
// One implementation, through avahi-daemon's client library
// (src/discovery/avahi.cc); nothing else in shoal includes Avahi.
#ifndef SHOAL_DISCOVERY_DNS_SD_H_
#define SHOAL_DISCOVERY_DNS_SD_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

struct DnsSdService {
  std::string instance;  // "pi0": unique on the network (renamed if not)
  std::string type;      // "_shoal._tcp"
  int port = 0;
  std::vector<std::string> txt;  // "key=value"
  // The IP it listens on: announced on the interface holding it only;
  // "", "0.0.0.0" or "::": on every interface.
  std::string listen_host;
};

// Announces while it exists; destroying it withdraws the service (a
// goodbye packet, so scans stop listing it).
class DnsSdAnnouncement {
 public:
  virtual ~DnsSdAnnouncement() = default;
};

// Starts announcing in the background and returns at once. `log` gets one
// line per change: announced, renamed after a name clash, or not
// announcing and why (avahi-daemon not running: then it keeps trying and
// announces once the daemon is up).
std::unique_ptr<DnsSdAnnouncement> StartAnnouncing(
    const DnsSdService& service, std::function<void(const std::string&)> log);

struct DnsSdFound {
  std::string instance;
  std::string host;     // the host's mDNS name, "pi-kitchen.local"
  std::string address;  // IPv4 literal
  int port = 0;
  std::vector<std::string> txt;
  std::string error;  // not resolved: why (the rest but `instance` empty)
};

// Browses the local network for `type` for `seconds` and resolves what it
// finds, one entry per instance name. Unavailable, saying how to start it,
// where avahi-daemon (or the D-Bus system bus it answers on) is not
// running.
StatusOr<std::vector<DnsSdFound>> BrowseDnsSd(const std::string& type,
                                              double seconds);

}  // namespace shoal

#endif  // SHOAL_DISCOVERY_DNS_SD_H_
