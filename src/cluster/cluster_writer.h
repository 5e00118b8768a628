// A Cluster written back as a cluster file (docs/cluster-format.md), as
// `shoal cluster scan -o` makes one from the workers it found. What
// ParseCluster reads from the text equals what was written.
#ifndef SHOAL_CLUSTER_CLUSTER_WRITER_H_
#define SHOAL_CLUSTER_CLUSTER_WRITER_H_

#include <string>

#include "cluster/cluster.h"
#include "util/status.h"

namespace shoal {

// One flow map per device, fields left out where they hold their default.
// `header` (may be empty) becomes comment lines at the top.
std::string FormatCluster(const Cluster& c, const std::string& header = "");

// FormatCluster into `path` (replaced); the error names the file.
Status WriteClusterFile(const Cluster& c, const std::string& path,
                        const std::string& header = "");

// "1GiB", "512MiB", "1500000" (bytes); "62Mbit", "1500bit"; "9ms", "0.4ms".
std::string FormatBytes(int64_t bytes);
std::string FormatBitRate(double bps);
std::string FormatDuration(double seconds);

}  // namespace shoal

#endif  // SHOAL_CLUSTER_CLUSTER_WRITER_H_
