#include "serve/server.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "io/image_metadata.h"
#include "metrics/http_server.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "partition/plan_model.h"
#include "runtime/peer_auth.h"
#include "runtime/wire.h"
#include "serve/classify.h"
#include "serve/dashboard.h"
#include "serve/generation.h"
#include "serve/http_api.h"
#include "serve/latency_history.h"
#include "serve/membership.h"
#include "serve/monitor.h"
#include "serve/server_impl.h"
#include "util/read_file.h"

namespace shoal {

Status Server::Impl::Configure(const ServeOptions& o) {
  opts = o;
  if (opts.max_message_bytes > 0) max_msg = opts.max_message_bytes;
  window = LoadWindow(std::max(1, opts.window_ticks));
  strategy = opts.strategy.empty() ? DefaultServeStrategy() : opts.strategy;
  Cluster cluster;
  if (!opts.cluster_file.empty()) {
    ASSIGN_OR_RETURN(cluster, LoadCluster(opts.cluster_file));
  } else if (opts.discover_s <= 0) {
    return InvalidArgument("serve needs --cluster, --discover or both");
  }
  if (cluster.tls.any()) {
    auto identity = LoadTlsIdentity(cluster.tls);
    if (!identity.ok()) {
      return identity.status().WithContext("the tls block of " +
                                           opts.cluster_file);
    }
    tls = std::move(identity).value();
  }
  if (opts.discover_s > 0) {
    // The first plan waits for one browse: the boards already announcing.
    auto devices = ScanForWorkers();
    if (!devices.ok()) {
      return devices.status().WithContext("--discover");
    }
    ServeLog(LogLevel::kInfo, "DNS-SD: %zu %s", devices->size(),
             devices->size() == 1 ? "worker announces itself"
                                  : "workers announce themselves");
    if (opts.cluster_file.empty()) {
      cluster.devices = devices.value();
    } else {
      for (const auto& d : *devices) {
        bool listed = false;
        for (const auto& f : cluster.devices) listed |= f.name == d.name;
        if (!listed) cluster.devices.push_back(d);
      }
    }
    found = std::move(devices).value();
  }
  if (cluster.devices.empty()) {
    return InvalidArgument(
        opts.cluster_file.empty()
            ? "no worker announced itself on DNS-SD (_shoal._tcp): start "
              "workers with announcements on (the default), or give --cluster"
            : "cluster " + opts.cluster_file + " has no devices");
  }
  for (const auto& d : cluster.devices) {
    if (d.address.empty()) {
      return InvalidArgument("device " + d.name + " of " + opts.cluster_file +
                             " has no address");
    }
    members.push_back(MakeMember(d, tls));
  }
  ASSIGN_OR_RETURN(model, LoadPlanModel(opts.model, true));
  if (model.graph.inputs.size() != 1) {
    return Unsupported("shoal serve takes models with one input; " +
                       opts.model.spec + " has " +
                       std::to_string(model.graph.inputs.size()));
  }
  if (!opts.http_token_file.empty()) {
    ASSIGN_OR_RETURN(http_token, ReadHttpToken(opts.http_token_file));
  }
  WarnPlainText();
  ServeLogWith(LogLevel::kInfo,
               {{"model", opts.model.spec},
                {"cluster", DeviceSource()},
                {"devices", cluster.devices.size()},
                {"strategy", strategy}},
               "model %s, cluster %s (%zu devices), strategy %s",
               opts.model.spec.c_str(), DeviceSource().c_str(),
               cluster.devices.size(), strategy.c_str());
  return Status::Ok();
}

StatusOr<std::string> Server::Impl::ReadHttpToken(const std::string& path) {
  ASSIGN_OR_RETURN(std::string t,
                   ReadBoundedFile(path, 4096, "--http-token-file"));
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  bool printable = true;
  for (char c : t) printable &= c > ' ' && c < 127;
  if (t.size() < 16 || !printable) {
    return InvalidArgument(
        "--http-token-file " + path +
        ": the token must be one line of at least 16 printable characters "
        "without spaces (e.g. openssl rand -hex 32 > " +
        path + ")");
  }
  return t;
}

void Server::Impl::WarnPlainText() {
  if (tls) return;
  std::vector<std::pair<const char*, std::string>> open;
  for (const auto& [flag, listen] :
       {std::pair<const char*, const std::string&>{"--listen", opts.listen},
        {"--metrics", opts.metrics_listen},
        {"--dashboard", opts.dashboard_listen},
        {"--http", opts.http_listen}}) {
    if (!listen.empty() && !IsLoopbackListen(listen)) {
      open.emplace_back(flag, listen);
    }
  }
  if (open.empty()) return;
  std::string list;
  for (const auto& [flag, listen] : open) {
    list += std::string(list.empty() ? "" : ", ") + flag + " " + listen;
  }
  ServeLog(LogLevel::kWarn,
           "%s listen%s beyond this machine in plain text (the cluster "
           "file has no tls block): anyone on the network reads the requests "
           "and answers%s; give the cluster file a tls block, or listen on "
           "127.0.0.1 (docs/security.md)",
           list.c_str(), open.size() == 1 ? "s" : "",
           http_token.empty()
               ? ", the cluster's state and device addresses, and may send "
                 "requests"
               : ", and the bearer token itself");
}

HttpServerOptions Server::Impl::HttpOptions() const {
  HttpServerOptions o;
  o.tls = tls;
  o.bearer_token = http_token;
  return o;
}

std::shared_ptr<const HttpApi> Server::Impl::MakeHttpApi() {
  auto api = std::make_shared<HttpApi>();
  const Graph& g = model.graph;
  api->model.name = ModelName();
  api->model.input_name = g.inputs[0];
  api->model.input_shape = g.tensors.at(g.inputs[0]).shape;
  api->model.output_name = g.outputs[0];
  api->model.output_shape = g.tensors.at(g.outputs[0]).shape;
  api->class_names = KnownClassNames(NumElements(api->model.output_shape));
  const Shape& in = api->model.input_shape;
  api->normalization = DefaultNormalization(in.size() == 4 ? in[1] : 3);
  // The model's own class names and normalization, where its file states
  // them (a trained model: docs/models.md); ImageNet's otherwise.
  Status stated = [&]() -> Status {
    ASSIGN_OR_RETURN(ModelMetadata md, LoadModelMetadata(opts.model.spec));
    ASSIGN_OR_RETURN(std::vector<std::string> names, ClassNamesOf(md));
    if (static_cast<int64_t>(names.size()) ==
        NumElements(api->model.output_shape))
      api->class_names = std::move(names);
    ASSIGN_OR_RETURN(api->normalization,
                     ImageNormalizationOf(md, in.size() == 4 ? in[1] : 3));
    return Status::Ok();
  }();
  if (!stated.ok()) {
    ServeLog(LogLevel::kWarn,
             "the image route uses ImageNet's class names and normalization: "
             "%s",
             stated.WithContext(opts.model.spec).message().c_str());
  }
  api->random_weights = Zoo::Global().Find(opts.model.spec) != nullptr;
  api->ready = [this] {
    std::lock_guard<std::mutex> lock(mu);
    return current != nullptr && !stopping;
  };
  api->run = [this](const std::function<StatusOr<Tensor>()>& input,
                    const std::string& client) {
    return ServeHttp(input, client);
  };
  return api;
}

std::string Server::Impl::ModelName() const {
  std::string n = opts.model.spec;
  if (auto slash = n.rfind('/'); slash != std::string::npos) {
    n = n.substr(slash + 1);
  }
  if (n.size() > 5 && n.substr(n.size() - 5) == ".onnx") {
    n.resize(n.size() - 5);
  }
  return n;
}

std::string Server::Impl::UrlOf(const HttpServer& s,
                                const std::string& listen) {
  return std::string(s.https() ? "https" : "http") + "://" +
         listen.substr(0, listen.rfind(':')) + ":" + std::to_string(s.port()) +
         "/";
}

Status Server::Impl::StartHttpServers() {
  if (!opts.metrics_listen.empty()) {
    auto http = HttpServer::Start(
        opts.metrics_listen, "shoal serve --metrics",
        {{"/metrics", [this] { return MetricsPage(); }}}, HttpOptions());
    if (!http.ok()) {
      Stop();
      return http.status();
    }
    metrics_http = std::move(http).value();
    ServeLogWith(LogLevel::kInfo,
                 {{"url", UrlOf(*metrics_http, opts.metrics_listen)},
                  {"port", metrics_http->port()}},
                 "metrics on %s (port %d): GET /metrics",
                 UrlOf(*metrics_http, opts.metrics_listen).c_str(),
                 metrics_http->port());
  }
  if (!opts.dashboard_listen.empty()) {
    std::vector<HttpRoute> routes;
    for (auto& [path, page] :
         DashboardRoutes([this] { return DashboardStatus(); })) {
      routes.push_back(
          {"GET", path, [page = page](const HttpRequest&) { return page(); }});
    }
    // The page's form sends an image through the same request path.
    routes.push_back(DashboardClassifyRoute(MakeHttpApi()));
    HttpServerOptions o = HttpOptions();
    o.max_body_bytes = opts.http_max_body_bytes;
    auto http = HttpServer::Start(opts.dashboard_listen,
                                  "shoal serve --dashboard", routes, o);
    if (!http.ok()) {
      Stop();
      return http.status();
    }
    dashboard_http = std::move(http).value();
    ServeLogWith(LogLevel::kInfo,
                 {{"url", UrlOf(*dashboard_http, opts.dashboard_listen)}},
                 "dashboard on %s",
                 UrlOf(*dashboard_http, opts.dashboard_listen).c_str());
  }
  if (!opts.http_listen.empty()) {
    HttpServerOptions o = HttpOptions();
    o.max_body_bytes = opts.http_max_body_bytes;
    // A request holds a thread until it is answered: enough for the
    // requests a plan pipelines, few enough that bodies stay bounded.
    o.threads = 8;
    o.io_timeout_ms = 30000;  // a large body on a Wi-Fi link
    auto http = HttpServer::Start(opts.http_listen, "shoal serve --http",
                                  HttpApiRoutes(MakeHttpApi()), o);
    if (!http.ok()) {
      Stop();
      return http.status();
    }
    api_http = std::move(http).value();
    ServeLogWith(LogLevel::kInfo,
                 {{"url", UrlOf(*api_http, opts.http_listen)},
                  {"port", api_http->port()},
                  {"model", ModelName()}},
                 "HTTP inference API on %s (port %d): model %s, POST "
                 "/v2/models/%s/infer, POST /v1/models/%s/classify",
                 UrlOf(*api_http, opts.http_listen).c_str(), api_http->port(),
                 ModelName().c_str(), ModelName().c_str(), ModelName().c_str());
  }
  return Status::Ok();
}

Status Server::Impl::DeployFirstPlan() {
  std::lock_guard<std::mutex> lock(monitor_mu);
  std::vector<std::string> events;
  CheckMembers(&members, mu, &events);
  std::string down;
  for (const auto& mem : members) {
    if (mem.state == Member::kDown) down += "; " + mem.why;
  }
  if (Candidates().empty()) {
    return Unavailable("no device of " + DeviceSource() + " answers" + down);
  }
  if (!down.empty()) {
    ServeLog(LogLevel::kWarn,
             "starting without the devices that do not answer%s", down.c_str());
  }
  return ReplanLocked("start", "start", Candidates(), true, 0, true);
}

Status Server::Impl::Listen() {
  grpc::ServerBuilder b;
  b.AddListeningPort(opts.listen, ServerCredentialsFor(tls.get()), &port);
  ConfigureServer(&b, max_msg);
  b.RegisterService(this);
  grpc_server = b.BuildAndStart();
  if (!grpc_server || port == 0) {
    Status s = Unavailable("shoal serve cannot listen on " + opts.listen);
    Stop();
    return s;
  }
  return Status::Ok();
}

void Server::Impl::Stop() {
  // Their pages read what is stopped below.
  metrics_http.reset();
  dashboard_http.reset();
  api_http.reset();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stopping) return;
    stopping = true;
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(stop_mu);
    monitor_stop = true;
    stop_cv.notify_all();
  }
  if (monitor.joinable()) monitor.join();
  if (discoverer.joinable()) discoverer.join();
  std::shared_ptr<Generation> cur;
  {
    std::lock_guard<std::mutex> lock(mu);
    cur = current;
  }
  // Requests running get 3 s to finish; new ones are refused already.
  if (cur) {
    cur->WaitIdle(Clock::now() + std::chrono::seconds(3));
    cur->coord().Cancel(Unavailable("shoal serve is shutting down"));
  }
  if (grpc_server) grpc_server->Shutdown(DeadlineIn(1000));
  if (cur) cur->coord().Release();
  ServeLogWith(
      LogLevel::kInfo,
      {{"accepted", accepted.load()},
       {"answered", answered.load()},
       {"failed", failed.load()},
       {"retried", retried.load()}},
      "stopped: %lld requests accepted, %lld answered, %lld failed, %lld "
      "retried",
      static_cast<long long>(accepted.load()),
      static_cast<long long>(answered.load()),
      static_cast<long long>(failed.load()),
      static_cast<long long>(retried.load()));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { impl_->Stop(); }

int Server::port() const { return impl_->port; }

int Server::metrics_port() const {
  return impl_->metrics_http ? impl_->metrics_http->port() : 0;
}

int Server::dashboard_port() const {
  return impl_->dashboard_http ? impl_->dashboard_http->port() : 0;
}

int Server::http_port() const {
  return impl_->api_http ? impl_->api_http->port() : 0;
}

void Server::Wait() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return impl_->stopping; });
}

void Server::Shutdown() { impl_->Stop(); }

void Server::Reload() { impl_->reload_requested = true; }

Status Server::Rebalance(const std::map<std::string, double>& speeds,
                         const std::string& reason) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.monitor_mu);
  std::vector<DeviceSpec> devs;
  {
    std::lock_guard<std::mutex> l(m.mu);
    if (!m.current) return Unavailable("no plan is deployed");
    devs = m.current->devices();
  }
  for (auto& d : devs) {
    auto it = speeds.find(d.name);
    if (it == speeds.end()) continue;
    if (!(it->second > 0)) {
      return InvalidArgument("speed of device " + d.name + " must be > 0");
    }
    d.speed = it->second;
  }
  for (const auto& [name, s] : speeds) {
    bool found = false;
    for (const auto& d : devs) found |= d.name == name;
    if (!found) return InvalidArgument("no device " + name + " in the plan");
  }
  return m.ReplanLocked("manual", reason, devs, false, 0, true);
}

rpc::ServeStatusReply Server::Snapshot() { return impl_->Snapshot(); }

StatusOr<std::unique_ptr<Server>> Server::Start(const ServeOptions& opts) {
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  RETURN_IF_ERROR(m.Configure(opts));
  // Before planning and deploying: an address that cannot be bound fails
  // the start at once, not after the weights went out.
  RETURN_IF_ERROR(m.StartHttpServers());
  RETURN_IF_ERROR(m.DeployFirstPlan());
  RETURN_IF_ERROR(m.Listen());
  ServeLogWith(LogLevel::kInfo, {{"listen", opts.listen}, {"port", m.port}},
               "listening on %s (port %d); monitoring every %.1f s",
               opts.listen.c_str(), m.port, opts.monitor_interval_s);
  Impl* p = impl.get();
  m.monitor = std::thread([p] { p->MonitorLoop(); });
  if (opts.discover_s > 0)
    m.discoverer = std::thread([p] { p->DiscoverLoop(); });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace shoal
