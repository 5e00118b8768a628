// The worker's config file (`shoal worker --config FILE`; the service reads
// /etc/shoal/worker.yaml): a YAML map whose keys are the worker's flags
// without their dashes, so a setting reads the same in both places and a
// flag on the command line overrides the file.
#ifndef SHOAL_CLI_WORKER_CONFIG_H_
#define SHOAL_CLI_WORKER_CONFIG_H_

#include <map>
#include <string>

#include "util/status.h"

namespace shoal {

// Flag ("--listen", "--tls-ca", ...) -> its value as text, checked: sizes
// parse, threads is a count, listen is HOST:PORT, paths (cache-dir, tls)
// are made absolute against the file's directory. An unknown key, a value
// of the wrong type or an unreadable file is an error naming the file and
// the key.
using WorkerSettings = std::map<std::string, std::string>;

StatusOr<WorkerSettings> ParseWorkerConfig(const std::string& text,
                                           const std::string& origin,
                                           const std::string& base_dir);
StatusOr<WorkerSettings> LoadWorkerConfig(const std::string& path);

}  // namespace shoal

#endif  // SHOAL_CLI_WORKER_CONFIG_H_
