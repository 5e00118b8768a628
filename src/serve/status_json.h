// The status of `shoal serve` (rpc::ServeStatusReply) as JSON: what
// `shoal infer-remote --status --json` prints, and the heart of what the
// dashboard polls (serve/dashboard.h).
#ifndef SHOAL_SERVE_STATUS_JSON_H_
#define SHOAL_SERVE_STATUS_JSON_H_

#include <nlohmann/json.hpp>

#include "shoal.pb.h"

namespace shoal {

nlohmann::json StatusJson(const rpc::ServeStatusReply& s);

}  // namespace shoal

#endif  // SHOAL_SERVE_STATUS_JSON_H_
