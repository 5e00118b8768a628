// `shoal cluster scan [-o FILE] [--timeout S]`: the workers that announce
// themselves on the local network (discovery/scan.h), listed, and written
// as a cluster file that `shoal profile` then measures.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cluster/cluster_writer.h"
#include "discovery/scan.h"

namespace shoal {
namespace {

struct ScanArgs {
  std::string out;
  double timeout_s = 3;
  TlsPaths tls;
};

Status RunScan(const ScanArgs& a) {
  if (!(a.timeout_s > 0 && a.timeout_s <= 600)) {
    return InvalidArgument("--timeout must be within 0 and 600 seconds");
  }
  ScanOptions o;
  o.browse_s = a.timeout_s;
  o.answer_s = a.timeout_s;
  ASSIGN_OR_RETURN(o.tls, LoadTlsFlags(a.tls));
  std::cout << "browsing for shoal workers (" << kShoalServiceType << ") for "
            << a.timeout_s << " s ..." << std::endl;
  ASSIGN_OR_RETURN(std::vector<ScannedWorker> found, ScanWorkers(o));
  const Cluster c = ClusterOfScan(found);
  if (found.empty()) {
    return NotFound(
        "no shoal worker announces itself on this network: start workers "
        "with --listen 0.0.0.0:7000 (they announce unless --no-announce), "
        "check that avahi-daemon runs on them and that UDP port 5353 "
        "(mDNS) is open, or write the cluster file by hand "
        "(docs/cluster-format.md)");
  }
  std::cout << found.size() << " worker" << (found.size() == 1 ? "" : "s")
            << " found, " << c.devices.size() << " usable:\n"
            << FormatScanTable(found);
  if (c.devices.empty()) {
    return Unavailable(
        "none of the workers found can be used (see the notes "
        "above); no cluster file written");
  }
  if (a.out.empty()) {
    std::cout << "-o FILE writes the usable ones as a cluster file"
              << std::endl;
    return Status::Ok();
  }
  Cluster file = c;
  if (o.tls) {  // the coordinator's files, as given, made absolute
    namespace fs = std::filesystem;
    file.tls = TlsPaths{
        fs::absolute(a.tls.ca).string(), fs::absolute(a.tls.cert).string(),
        fs::absolute(a.tls.key).string(),
        a.tls.crl.empty() ? "" : fs::absolute(a.tls.crl).string()};
  }
  std::ostringstream header;
  header << "Found by `shoal cluster scan`: " << c.devices.size()
         << " workers announcing " << kShoalServiceType << ".\n"
         << "`shoal profile MODEL --cluster " << a.out
         << "` measures their speed and links.";
  RETURN_IF_ERROR(WriteClusterFile(file, a.out, header.str()));
  std::cout << "wrote " << a.out << " (" << c.devices.size() << " device"
            << (c.devices.size() == 1 ? "" : "s")
            << "); next: shoal profile MODEL --cluster " << a.out
            << " measures their speed and links" << std::endl;
  return Status::Ok();
}

}  // namespace

void AddClusterScanCommand(CLI::App* cluster) {
  auto a = std::make_shared<ScanArgs>();
  CLI::App* cmd = cluster->add_subcommand(
      "scan",
      "List the workers announcing themselves on the local network "
      "(DNS-SD through avahi-daemon) and write them as a cluster file");
  cmd->add_option("-o,--output", a->out,
                  "Cluster file to write with the usable workers");
  cmd->add_option("--timeout", a->timeout_s,
                  "Seconds to listen for announcements, and each worker's "
                  "deadline to answer (default 3)");
  AddTlsOptions(cmd, &a->tls, "coordinator");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunScan(*a))); });
}

}  // namespace shoal
