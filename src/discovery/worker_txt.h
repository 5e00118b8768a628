// What a worker says about itself when it announces itself with DNS-SD
// (service type _shoal._tcp): the TXT record's keys and their checks. A
// scan reads records from any host on the network, so every value is
// checked and a bad one named, never trusted.
#ifndef SHOAL_DISCOVERY_WORKER_TXT_H_
#define SHOAL_DISCOVERY_WORKER_TXT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

inline constexpr const char* kShoalServiceType = "_shoal._tcp";

struct WorkerAdvert {
  std::string name;          // device name (--name)
  int cores = 1;             // kernel threads it computes with (--threads)
  int64_t memory_bytes = 0;  // its memory budget; 0: unlimited
  std::string version;       // shoal release, "0.1.0"
  uint32_t protocol = 0;     // wire protocol (runtime/wire.h)
  bool tls = false;          // takes mutual TLS connections only
};

// "key=value" strings, one per TXT entry; txtvers=1 first, as DNS-SD
// (RFC 6763 6.7) suggests, so later keys can change meaning.
std::vector<std::string> EncodeWorkerTxt(const WorkerAdvert& a);

// The record's entries as a map (entries without '=' map to "").
std::map<std::string, std::string> TxtEntries(
    const std::vector<std::string>& txt);

// The advert of a TXT record; an error names the key at fault. `name`,
// `protocol` and `version` are required, the rest have defaults.
StatusOr<WorkerAdvert> DecodeWorkerTxt(
    const std::map<std::string, std::string>& txt);

}  // namespace shoal

#endif  // SHOAL_DISCOVERY_WORKER_TXT_H_
