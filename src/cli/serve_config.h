// The config file of `shoal serve --config FILE` (the shoal-serve service
// reads /etc/shoal/serve.yaml): a YAML map whose keys are serve's flags
// without their dashes, as the worker's file is (cli/worker_config.h), so
// a setting reads the same in both places and a flag on the command line
// overrides the file.
#ifndef SHOAL_CLI_SERVE_CONFIG_H_
#define SHOAL_CLI_SERVE_CONFIG_H_

#include <map>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

// Flag ("--cluster", "--imbalance", ...) -> its value as text, checked
// against what the flag takes: numbers in their range (imbalance above 1,
// min-gain in [0, 1), ...), sizes parse, listen addresses are HOST:PORT,
// advertise a HOST, objective and log-format one of their words; paths
// (cluster, http-token-file, an .onnx model) are made absolute against the
// file's directory. An unknown key, a value of the wrong type or out of
// range, or an unreadable file is an error naming the file and the key.
using ServeSettings = std::map<std::string, std::string>;

StatusOr<ServeSettings> ParseServeConfig(const std::string& text,
                                         const std::string& origin,
                                         const std::string& base_dir);
StatusOr<ServeSettings> LoadServeConfig(const std::string& path);

// Every key the file may hold, in the order serve's --help lists the flags.
std::vector<std::string> ServeConfigKeys();

}  // namespace shoal

#endif  // SHOAL_CLI_SERVE_CONFIG_H_
