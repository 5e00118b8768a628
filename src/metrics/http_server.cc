#include "metrics/http_server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "metrics/http_route.h"
#include "security/openssl_util.h"
#include "util/net_address.h"

namespace shoal {

namespace {

// httplib's ThreadPool queues every accepted connection without a bound:
// a client opening connections faster than they are answered would grow
// it (and the open sockets) without end. This pool holds a few; beyond
// that the accepting thread answers the connection itself, so further
// ones wait in the kernel's accept queue (bounded by the listen backlog).
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(int threads, size_t max_queued) : max_queued_(max_queued) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~BoundedPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stop_ && jobs_.size() < max_queued_) {
        jobs_.push_back(std::move(fn));
        cv_.notify_one();
        return;
      }
    }
    fn();  // full: back-pressure on the accepting thread
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      stop_ = true;
      cv_.notify_all();
    }
    for (auto& t : threads_) t.join();
  }

 private:
  void Loop() {
    while (true) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, and nothing left to close
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();  // answers one connection and closes its socket
    }
  }

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// Paths longer than this are refused (414) before any route is tried:
// httplib matches its own handlers with std::regex, which recurses once
// per character of the path.
constexpr size_t kMaxPathBytes = 1024;

// The server's SSL_CTX: the identity's certificate and key, TLS 1.2 or
// newer, and a client certificate verified against the identity's CA when
// the client shows one (a client with the bearer token shows none).
bool SetUpTls(SSL_CTX& ctx, const TlsIdentity& id, bool send_ca) {
  auto cert = ParseCertPem(id.cert_pem, "the TLS certificate");
  auto key = ParseKeyPem(id.key_pem, "the TLS key");
  if (!cert.ok() || !key.ok()) return false;
  if (SSL_CTX_use_certificate(&ctx, cert->get()) != 1 ||
      SSL_CTX_use_PrivateKey(&ctx, key->get()) != 1 ||
      SSL_CTX_check_private_key(&ctx) != 1 ||
      SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION) != 1) {
    return false;
  }
  X509_STORE* store = SSL_CTX_get_cert_store(&ctx);
  BIO* bio =
      BIO_new_mem_buf(id.ca_pem.data(), static_cast<int>(id.ca_pem.size()));
  if (bio == nullptr) return false;
  int added = 0;
  while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, ca) == 1) {
      SSL_CTX_add_client_CA(&ctx, ca);
      if (send_ca) SSL_CTX_add1_chain_cert(&ctx, ca);
      ++added;
    }
    X509_free(ca);
  }
  BIO_free(bio);
  OpenSslErrors();  // the end of the bundle queues a "no start line"
  if (added == 0) return false;
  SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
  return true;
}

// Whether the request may be answered: the bearer token, or over TLS a
// verified client certificate with the coordinator role. "" when it may,
// else why not.
std::string Refusal(const httplib::Request& req, const HttpServerOptions& o) {
  if (!o.require_credentials || (!o.tls && o.bearer_token.empty())) return "";
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (!o.bearer_token.empty() &&
      auth.size() == prefix.size() + o.bearer_token.size() &&
      auth.compare(0, prefix.size(), prefix) == 0 &&
      CRYPTO_memcmp(auth.data() + prefix.size(), o.bearer_token.data(),
                    o.bearer_token.size()) == 0) {
    return "";
  }
  std::string cert_why;
  if (o.tls && req.ssl != nullptr) {
    X509Ptr peer(SSL_get1_peer_certificate(req.ssl));
    if (peer && SSL_get_verify_result(req.ssl) == X509_V_OK) {
      const auto role = RoleOfDnsNames(CertDnsNames(peer.get()));
      const bool revoked =
          o.tls->revoked && o.tls->revoked->IsRevoked(peer.get());
      if (role == TlsRole::kCoordinator && !revoked) return "";
      if (revoked) {
        cert_why = "; the client certificate of '" +
                   CertCommonName(peer.get()) + "' is revoked (" +
                   o.tls->revoked->path() + ")";
      } else {
        cert_why = "; the client certificate of '" +
                   CertCommonName(peer.get()) + "' is a " +
                   (role ? RoleName(*role) : "role-less") +
                   " certificate, and this takes a coordinator one";
      }
    }
  }
  std::string ways;
  if (o.tls) ways = "a coordinator certificate of the cluster CA";
  if (!o.bearer_token.empty()) {
    ways += std::string(ways.empty() ? "" : " or ") +
            "the bearer token (Authorization: Bearer TOKEN)";
  }
  return (auth.empty() ? "no credentials"
                       : "the Authorization header is not the token") +
         cert_why + ": " + req.method + " " + req.path + " takes " + ways +
         " (docs/security.md)";
}

void Answer(const HttpReply& r, httplib::Response& res) {
  res.status = r.status;
  res.set_header("Cache-Control", "no-store");
  for (const auto& [k, v] : r.headers) res.set_header(k, v);
  res.set_content(r.body, r.content_type);
}

// A request answered before its body was read: the connection closes, or
// the body would be read as the next request.
bool HasBody(const httplib::Request& req) {
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") &&
          req.get_header_value("Content-Length") != "0");
}

}  // namespace

std::string HttpRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

HttpReply JsonError(int status, const std::string& message) {
  HttpReply r;
  r.status = status;
  r.content_type = "application/json";
  r.body = nlohmann::json{{"error", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

struct HttpServer::Impl {
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  int port = 0;
  bool https = false;
  HttpServerOptions opts;
  std::vector<HttpRoute> routes;

  // The route for the request, or the error that answers it.
  const HttpRoute* Find(const httplib::Request& req, HttpReply* error,
                        std::map<std::string, std::string>* params) const {
    std::string allowed;
    for (const auto& r : routes) {
      std::map<std::string, std::string> p;
      if (!MatchPath(r.pattern, req.path, &p)) continue;
      if (r.method == req.method) {
        *params = std::move(p);
        return &r;
      }
      allowed += (allowed.empty() ? "" : ", ") + r.method;
    }
    if (allowed.empty()) {
      *error = JsonError(404, "no page " + req.path);
    } else {
      *error = JsonError(
          405, req.method + " " + req.path + ": this path takes " + allowed);
      error->headers["Allow"] = allowed;
    }
    return nullptr;
  }

  HttpReply Call(const HttpRoute& route, const httplib::Request& req,
                 std::string_view body,
                 std::map<std::string, std::string> params) const {
    HttpRequest r;
    r.method = req.method;
    r.path = req.path;
    r.body = body;
    r.path_params = std::move(params);
    r.remote = req.remote_addr + ":" + std::to_string(req.remote_port);
    for (const auto& [k, v] : req.params) r.query.emplace(k, v);
    for (const auto& [k, v] : req.headers) {
      std::string lower = k;
      for (char& c : lower) c = static_cast<char>(std::tolower(c));
      r.headers.emplace(lower, v);
    }
    try {
      return route.handle(r);
    } catch (const std::exception& e) {
      // A page that cannot be made is an answer, never a dead thread.
      HttpReply x;
      x.status = 500;
      x.body = std::string("internal error: ") + e.what() + "\n";
      return x;
    }
  }

  // Before httplib reads a body: the path's length, the declared body
  // size, the credentials and the route are checked here, so that a
  // client without credentials never has a body read. GETs are answered
  // here too; a POST's body is read by Post() below (up to
  // max_body_bytes).
  httplib::Server::HandlerResponse PreRoute(const httplib::Request& req,
                                            httplib::Response& res) const {
    HttpReply error;
    std::map<std::string, std::string> params;
    const HttpRoute* route = nullptr;
    if (req.path.size() > kMaxPathBytes) {
      error = JsonError(414, "the path is longer than " +
                                 std::to_string(kMaxPathBytes) + " bytes");
    } else if (req.has_header("Content-Length") &&
               std::strtoull(req.get_header_value("Content-Length").c_str(),
                             nullptr,
                             10) > static_cast<uint64_t>(opts.max_body_bytes)) {
      error = JsonError(413, "the request body is larger than " +
                                 std::to_string(opts.max_body_bytes) +
                                 " bytes, the most this server reads");
    } else if (req.get_header_value("Content-Type")
                   .starts_with("multipart/form-data")) {
      // A form (curl -F) wraps the bytes in parts this server does not
      // take apart.
      error = JsonError(415,
                        "the body is a multipart form: send the bytes "
                        "themselves as the body (curl --data-binary @FILE, "
                        "not -F)");
    } else if (std::string why = Refusal(req, opts); !why.empty()) {
      error = JsonError(401, why);
      error.headers["WWW-Authenticate"] = "Bearer realm=\"shoal\"";
    } else if ((route = Find(req, &error, &params)) != nullptr) {
      if (req.method == "POST")
        return httplib::Server::HandlerResponse::Unhandled;
      error = Call(*route, req, "", std::move(params));
    }
    if (HasBody(req)) error.headers["Connection"] = "close";
    Answer(error, res);
    return httplib::Server::HandlerResponse::Handled;
  }

  // A POST whose route PreRoute found. Its body is read here, not by
  // httplib's handler for a plain POST: that one takes a body sent as a
  // form (curl --data-binary's default Content-Type) apart into
  // parameters, and refuses one over 8 KiB.
  void Post(const httplib::Request& req, httplib::Response& res,
            const httplib::ContentReader& reader) const {
    HttpReply error;
    std::map<std::string, std::string> params;
    const HttpRoute* route = Find(req, &error, &params);
    if (route == nullptr) {
      Answer(error, res);
      return;
    }
    std::string body;
    const uint64_t max = static_cast<uint64_t>(opts.max_body_bytes);
    if (req.has_header("Content-Length")) {
      body.reserve(std::min<uint64_t>(
          max, std::strtoull(req.get_header_value("Content-Length").c_str(),
                             nullptr, 10)));
    }
    bool over = false;
    const bool read = reader([&](const char* data, size_t n) {
      if (body.size() + n > max) {
        over = true;
        return false;
      }
      body.append(data, n);
      return true;
    });
    if (!read) {
      HttpReply e =
          over ? JsonError(413, "the request body is larger than " +
                                    std::to_string(max) +
                                    " bytes, the most this server reads")
               : JsonError(400, "the request body could not be read whole");
      e.headers["Connection"] = "close";
      Answer(e, res);
      return;
    }
    Answer(Call(*route, req, body, std::move(params)), res);
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  impl_->server->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int HttpServer::port() const { return impl_->port; }

bool HttpServer::https() const { return impl_->https; }

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, const std::string& what,
    const std::map<std::string, HttpHandler>& routes,
    const HttpServerOptions& opts) {
  std::vector<HttpRoute> r;
  for (const auto& [path, handler] : routes) {
    r.push_back(
        {"GET", path, [h = handler](const HttpRequest&) { return h(); }});
  }
  return Start(listen, what, std::move(r), opts);
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, const std::string& what,
    std::vector<HttpRoute> routes, const HttpServerOptions& opts) {
  auto hp = SplitHostPort(listen, what);
  if (!hp.ok()) return hp.status();
  if (hp->port < 0 || hp->port > 65535 || hp->host.empty()) {
    return InvalidArgument(what + " " + listen +
                           ": give HOST:PORT, e.g. 127.0.0.1:9100");
  }
  auto impl = std::make_unique<Impl>();
  impl->opts = opts;
  impl->routes = std::move(routes);
  if (opts.tls) {
    std::shared_ptr<const TlsIdentity> id = opts.tls;
    const bool send_ca = opts.send_ca;
    auto ssl = std::make_unique<httplib::SSLServer>(
        [id, send_ca](SSL_CTX& ctx) { return SetUpTls(ctx, *id, send_ca); });
    if (!ssl->is_valid()) {
      return InvalidArgument(what + ": cannot set up TLS with certificate '" +
                             id->name + "': " + OpenSslErrors());
    }
    impl->server = std::move(ssl);
    impl->https = true;
  } else {
    impl->server = std::make_unique<httplib::Server>();
  }
  httplib::Server& s = *impl->server;
  const int threads = std::max(1, opts.threads);
  s.new_task_queue = [threads] {
    return new BoundedPool(threads, static_cast<size_t>(threads) * 4);
  };
  const auto io = std::chrono::milliseconds(opts.io_timeout_ms);
  s.set_read_timeout(io);
  s.set_write_timeout(io);
  s.set_keep_alive_timeout(std::max<time_t>(1, opts.io_timeout_ms / 1000));
  s.set_keep_alive_max_count(100);
  s.set_payload_max_length(static_cast<size_t>(opts.max_body_bytes));
  // httplib's default sets SO_REUSEPORT, with which a second server binds
  // a port already served and the two share its connections: a taken port
  // must be an error. SO_REUSEADDR alone lets a restart bind at once.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const Impl* p = impl.get();
  s.set_pre_routing_handler(
      [p](const httplib::Request& req, httplib::Response& res) {
        return p->PreRoute(req, res);
      });
  // Reached only for a POST whose route PreRoute found (it answers every
  // other request), and whose path it bounded.
  s.Post(".*", [p](const httplib::Request& req, httplib::Response& res,
                   const httplib::ContentReader& reader) {
    p->Post(req, res, reader);
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty() && res.status == 413) {
      Answer(JsonError(413,
                       "the request body is larger than this server "
                       "reads"),
             res);
    }
  });
  errno = 0;
  if (hp->port == 0) {
    impl->port = s.bind_to_any_port(hp->host);
  } else if (s.bind_to_port(hp->host, hp->port)) {
    impl->port = hp->port;
  } else {
    impl->port = -1;
  }
  if (impl->port <= 0) {
    const int err = errno;
    std::string why =
        err == EADDRINUSE ? "the port is taken (another process listens on it)"
        : err == EADDRNOTAVAIL ? "the host is not an address of this machine"
        : err == EACCES        ? "permission denied (a port below 1024?)"
        : err != 0             ? std::strerror(err)
                   : "the host does not resolve or the port cannot be bound";
    return Unavailable(what + " cannot listen on " + listen + ": " + why);
  }
  Impl* q = impl.get();
  impl->thread = std::thread([q] { q->server->listen_after_bind(); });
  // stop() before the thread runs would be missed, and the destructor wait
  // for ever: return once it listens (at once, in practice).
  for (int i = 0; i < 2000 && !impl->server->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace shoal
