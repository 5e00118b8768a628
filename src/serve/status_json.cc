#include "serve/status_json.h"

namespace shoal {

nlohmann::json StatusJson(const rpc::ServeStatusReply& s) {
  nlohmann::json j;
  j["model"] = s.model();
  j["generation"] = s.generation();
  j["strategy"] = s.strategy();
  j["accepted"] = s.accepted();
  j["answered"] = s.answered();
  j["failed"] = s.failed();
  j["retried"] = s.retried();
  j["in_flight"] = s.in_flight();
  j["latency_ms_p50"] = s.latency_ms_p50();
  j["input_shape"] =
      std::vector<int64_t>(s.input_shape().begin(), s.input_shape().end());
  j["devices"] = nlohmann::json::array();
  for (const auto& d : s.devices()) {
    j["devices"].push_back({{"name", d.name()},
                            {"address", d.address()},
                            {"share", d.share()},
                            {"predicted_ms", d.predicted_ms()},
                            {"measured_ms", d.measured_ms()},
                            {"queue_mean", d.queue_mean()},
                            {"state", d.state()},
                            {"utilisation", d.utilisation()},
                            {"link_bandwidth_bps", d.link_bandwidth_bps()},
                            {"link_latency_s", d.link_latency_s()}});
  }
  j["replans"] = nlohmann::json::array();
  for (const auto& r : s.replans()) {
    j["replans"].push_back(
        {{"generation", r.generation()},
         {"reason", r.reason()},
         {"strategy", r.strategy()},
         {"devices",
          std::vector<std::string>(r.devices().begin(), r.devices().end())},
         {"old_shares",
          std::vector<double>(r.old_shares().begin(), r.old_shares().end())},
         {"new_shares",
          std::vector<double>(r.new_shares().begin(), r.new_shares().end())},
         {"predicted_ms", r.predicted_ms()},
         {"measured_ms", r.measured_ms()},
         {"switch_ms", r.switch_ms()},
         {"unix_ms", r.unix_ms()},
         {"kind", r.kind()}});
  }
  return j;
}

}  // namespace shoal
