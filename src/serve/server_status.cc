// What serve shows of itself: the ServeStatus reply, the Prometheus page
// of --metrics and the dashboard's status (docs/serve.md).
#include <mutex>

#include "metrics/exposition.h"
#include "metrics/http_server.h"
#include "runtime/wire.h"
#include "serve/dashboard.h"
#include "serve/generation.h"
#include "serve/latency_history.h"
#include "serve/membership.h"
#include "serve/serve_metrics.h"
#include "serve/server_impl.h"
#include "util/clock.h"

namespace shoal {

rpc::ServeStatusReply Server::Impl::Snapshot() {
  rpc::ServeStatusReply r;
  r.set_protocol(kProtocolVersion);
  r.set_model(opts.model.spec);
  for (int64_t v : model.graph.tensors.at(model.graph.inputs[0]).shape) {
    r.add_input_shape(v);
  }
  std::lock_guard<std::mutex> lock(mu);
  r.set_accepted(accepted);
  r.set_answered(answered);
  r.set_failed(failed);
  r.set_retried(retried);
  r.set_latency_ms_p50(last_p50);
  for (const auto& x : replans) *r.add_replans() = x;
  if (current) {
    r.set_generation(current->id());
    r.set_strategy(current->strategy());
    r.set_in_flight(current->InFlight());
    const auto& devs = current->devices();
    for (size_t d = 0; d < devs.size(); ++d) {
      auto* o = r.add_devices();
      o->set_name(devs[d].name);
      o->set_address(devs[d].address);
      o->set_share(devs[d].speed);
      o->set_predicted_ms(current->predicted_ms()[d]);
      if (d < last_loads.size()) {
        o->set_measured_ms(last_loads[d].measured_ms);
        o->set_queue_mean(last_loads[d].queue_mean);
      }
      o->set_state("serving");
      o->set_link_bandwidth_bps(devs[d].link.bandwidth_bps);
      o->set_link_latency_s(devs[d].link.latency_s);
      if (d < last_loads.size()) o->set_utilisation(last_loads[d].utilisation);
    }
  }
  for (const auto& m : members) {
    if (m.state == Member::kServing) continue;
    auto* o = r.add_devices();
    o->set_name(m.spec.name);
    o->set_address(m.spec.address);
    o->set_share(m.spec.speed);
    o->set_state(StateName(m.state));
    o->set_link_bandwidth_bps(m.spec.link.bandwidth_bps);
    o->set_link_latency_s(m.spec.link.latency_s);
  }
  return r;
}

HttpReply Server::Impl::MetricsPage() {
  HttpReply r;
  r.content_type = kExpositionContentType;
  r.body = metrics.Scrape(Snapshot());
  return r;
}

nlohmann::json Server::Impl::DashboardStatus() {
  DashboardState st;
  st.status = Snapshot();
  std::shared_ptr<Generation> cur;
  {
    std::lock_guard<std::mutex> lock(mu);
    cur = current;
  }
  if (cur) st.plan = &cur->plan();  // a generation's plan never changes
  st.latency_buckets = metrics.LatencyBuckets();
  st.history = history.Points();
  st.uptime_s = MsSince(started) / 1e3;
  st.replans_not_made = replans_not_made.List();
  st.request_errors = request_errors.List();
  return DashboardJson(st);
}

}  // namespace shoal
