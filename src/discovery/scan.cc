#include "discovery/scan.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "cluster/cluster_writer.h"
#include "runtime/wire.h"
#include "util/net_address.h"
#include "util/parallel_for.h"
#include "util/version.h"

namespace shoal {
namespace {

// Announced workers asked for their health at once, at most: more wait
// their turn, each within its own deadline.
constexpr size_t kConcurrentChecks = 64;

// What a failed Health call says about the worker, for its note.
std::string WhyNoAnswer(const grpc::Status& s, const ScannedWorker& w,
                        double answer_s) {
  const std::string port = w.address.substr(w.address.rfind(':') + 1);
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::ostringstream os;
    os << "announced, but does not answer at " << w.address << " within "
       << answer_s << " s (a firewall dropping port " << port << "?)";
    return os.str();
  }
  if (s.error_message().find("onnection refused") != std::string::npos) {
    return "announced, but refuses connections at " + w.address +
           " (its worker stopped, or a firewall rejects port " + port + ")";
  }
  return "announced, but does not answer at " + w.address + ": " +
         s.error_message();
}

// Asks one worker for its health; fills in what it says about itself.
void Check(ScannedWorker* w, const ScanOptions& o) {
  const bool we_tls = o.tls != nullptr;
  if (w->advert.tls && !we_tls) {
    w->note =
        "takes mutual TLS only: scan with --tls-ca, --tls-cert and --tls-key "
        "(a coordinator's certificate of its CA) to check it and list it";
    return;
  }
  if (!w->advert.tls && we_tls) {
    w->note =
        "plaintext, but this scan uses TLS: its cluster could not use both";
    return;
  }
  auto stub = rpc::Worker::NewStub(
      MakeChannel(w->address, kDefaultMaxMessageBytes, o.tls.get()));
  rpc::HealthRequest req;
  req.set_protocol(kProtocolVersion);
  rpc::HealthReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(static_cast<int64_t>(o.answer_s * 1000)));
  const grpc::Status s = stub->Health(&ctx, req, &rep);
  if (!s.ok()) {
    w->note = WhyNoAnswer(s, *w, o.answer_s);
    return;
  }
  if (rep.name() != w->advert.name) {
    w->note = "answers as '" + rep.name() + "', not as the '" + w->advert.name +
              "' it announces (another worker on its port?)";
    return;
  }
  // Its answer over what a cache on the network may still hold.
  w->advert.protocol = rep.protocol();
  w->advert.memory_bytes = rep.memory_budget();
  if (rep.threads() >= 1 && rep.threads() <= 1024) {
    w->advert.cores = rep.threads();
  }
  if (rep.protocol() != kProtocolVersion) return;  // noted by the caller
  w->usable = true;
}

}  // namespace

std::vector<ScannedWorker> CheckFoundWorkers(
    const std::vector<DnsSdFound>& found, const ScanOptions& o) {
  std::vector<ScannedWorker> out;
  for (const auto& f : found) {
    ScannedWorker w;
    w.instance = f.instance;
    w.host = f.host;
    if (!f.error.empty()) {
      w.note = f.error;
      out.push_back(w);
      continue;
    }
    w.address = JoinHostPort(f.address, f.port);
    auto a = DecodeWorkerTxt(TxtEntries(f.txt));
    if (!a.ok()) {
      w.note = "not a shoal worker's announcement: " + a.status().message();
      out.push_back(w);
      continue;
    }
    w.advert = *a;
    w.advert_ok = true;
    out.push_back(w);
  }
  // Many at once, so that each worker's deadline is the whole wait rather
  // than adding up; never a thread each, as the announcements come from
  // anyone on the network.
  ParallelFor(out.size(), kConcurrentChecks, [&](size_t i) {
    if (out[i].advert_ok) Check(&out[i], o);
  });
  std::map<std::string, const ScannedWorker*> by_name;
  for (auto& w : out) {
    if (w.advert_ok && w.advert.protocol != kProtocolVersion) {
      const std::string why =
          "speaks shoal protocol " + std::to_string(w.advert.protocol) +
          " (shoal " + w.advert.version + "), this shoal speaks " +
          std::to_string(kProtocolVersion) + " (shoal " + kShoalVersion +
          "): install the same release on every device and here";
      w.note = w.note.empty() ? why : why + "; " + w.note;
      w.usable = false;
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.advert.name, a.instance) <
           std::tie(b.advert.name, b.instance);
  });
  for (auto& w : out) {
    if (!w.usable) continue;
    auto [it, fresh] = by_name.emplace(w.advert.name, &w);
    if (!fresh) {
      w.usable = false;
      w.note = "has the name of the worker at " + it->second->address +
               ": give one of them another --name";
    }
  }
  return out;
}

StatusOr<std::vector<ScannedWorker>> ScanWorkers(const ScanOptions& o) {
  ASSIGN_OR_RETURN(std::vector<DnsSdFound> found,
                   BrowseDnsSd(kShoalServiceType, o.browse_s));
  return CheckFoundWorkers(found, o);
}

Cluster ClusterOfScan(const std::vector<ScannedWorker>& workers) {
  Cluster c;
  for (const auto& w : workers) {
    if (!w.usable) continue;
    DeviceSpec d;
    d.name = w.advert.name;
    d.address = w.address;
    d.memory_bytes = w.advert.memory_bytes;
    d.cores = w.advert.cores;
    c.devices.push_back(d);
  }
  return c;
}

std::string FormatScanTable(const std::vector<ScannedWorker>& workers) {
  std::vector<std::vector<std::string>> rows = {
      {"name", "address", "cores", "memory", "version", "host"}};
  for (const auto& w : workers) {
    const bool a = w.advert_ok;
    rows.push_back(
        {a ? w.advert.name : w.instance, w.address.empty() ? "-" : w.address,
         a ? std::to_string(w.advert.cores) : "-",
         !a                          ? "-"
         : w.advert.memory_bytes > 0 ? FormatBytes(w.advert.memory_bytes)
                                     : "unlimited",
         a ? w.advert.version + " (protocol " +
                 std::to_string(w.advert.protocol) + ")"
           : "-",
         w.host.empty() ? "-" : w.host});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  }
  std::ostringstream os;
  for (size_t k = 0; k < rows.size(); ++k) {
    os << "  ";
    for (size_t i = 0; i < rows[k].size(); ++i) {
      if (i + 1 < rows[k].size()) {
        os << std::left << std::setw(static_cast<int>(width[i]) + 2);
      }
      os << rows[k][i];
    }
    if (k > 0 && !workers[k - 1].usable) {
      os << "\n    not usable: " << workers[k - 1].note;
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace shoal
