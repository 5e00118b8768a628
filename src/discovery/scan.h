// `shoal cluster scan`: the workers that announce themselves on the local
// network (DNS-SD, _shoal._tcp), each checked by asking it for its health
// within a deadline, and the cluster file of those that can be used.
#ifndef SHOAL_DISCOVERY_SCAN_H_
#define SHOAL_DISCOVERY_SCAN_H_

#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "discovery/dns_sd.h"
#include "discovery/worker_txt.h"
#include "security/tls_identity.h"
#include "util/status.h"

namespace shoal {

struct ScannedWorker {
  std::string instance;  // the DNS-SD name
  std::string host;      // "pi-kitchen.local"
  std::string address;   // "192.168.1.20:7000"; "" if it did not resolve
  WorkerAdvert advert;   // from its TXT record, then from its answer
  bool advert_ok = false;
  // Answered, speaks this protocol, and its TLS setting matches the scan's:
  // it goes into the cluster file. Otherwise `note` says why not.
  bool usable = false;
  std::string note;
};

struct ScanOptions {
  double browse_s = 3;  // how long to listen for announcements
  double answer_s = 3;  // each worker's deadline to answer
  // The coordinator's identity for workers announcing TLS; null: plaintext.
  std::shared_ptr<const TlsIdentity> tls;
};

// Browses, then checks every worker found, all at once. Fails only where
// browsing itself cannot be done (avahi-daemon not running).
StatusOr<std::vector<ScannedWorker>> ScanWorkers(const ScanOptions& o);

// The checks of ScanWorkers on what a browse found (for tests without a
// network): decodes each record, then asks each worker for its health.
std::vector<ScannedWorker> CheckFoundWorkers(
    const std::vector<DnsSdFound>& found, const ScanOptions& o);

// The usable workers as cluster devices (name, address, memory, cores),
// sorted by name; speeds and links are left to `shoal profile`.
Cluster ClusterOfScan(const std::vector<ScannedWorker>& workers);

// The table `cluster scan` prints: name, address, cores, memory, version,
// and a note for each worker that is not usable.
std::string FormatScanTable(const std::vector<ScannedWorker>& workers);

}  // namespace shoal

#endif  // SHOAL_DISCOVERY_SCAN_H_
