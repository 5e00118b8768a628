// A small, bounded HTTP server: the Prometheus endpoint of `shoal worker
// --metrics` and `shoal serve --metrics`, the dashboard of `shoal serve
// --dashboard` and the HTTP inference API of `shoal serve --http`.
// cpp-httplib (Debian's libcpp-httplib-dev, built with OpenSSL) does the
// HTTP; this file holds what every endpoint gets: a bound on the request
// body, 5 s to read a request or write an answer, a handful of threads, a
// clear error when the address cannot be bound, and one rule of trust:
// with a TLS identity it speaks HTTPS only, and with TLS or a bearer token
// every request must show a coordinator certificate of the cluster CA or
// the token (docs/security.md).
#ifndef SHOAL_METRICS_HTTP_SERVER_H_
#define SHOAL_METRICS_HTTP_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "security/tls_identity.h"
#include "util/status.h"

namespace shoal {

struct HttpRequest {
  std::string method, path;
  // The body as the server read it (up to max_body_bytes), not a copy:
  // valid while the handler runs.
  std::string_view body;
  std::map<std::string, std::string> path_params;  // the {name} segments
  std::map<std::string, std::string> query;        // the first of each
  std::map<std::string, std::string> headers;      // names in lower case
  std::string remote;                              // the client's ADDR:PORT

  // The header's value ("" when absent); `name` in lower case.
  std::string Header(const std::string& name) const;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::map<std::string, std::string> headers;
};

// A JSON error, {"error": message}, with `status`: what the server itself
// answers (401, 404, 405, 413, 414) and the inference API's errors.
HttpReply JsonError(int status, const std::string& message);

// Called on one of the server's threads, possibly several at once.
using HttpHandler = std::function<HttpReply()>;
using HttpRequestHandler = std::function<HttpReply(const HttpRequest&)>;

struct HttpRoute {
  std::string method;   // "GET" or "POST"
  std::string pattern;  // metrics/http_route.h: "/v2/models/{model}"
  HttpRequestHandler handle;
};

struct HttpServerOptions {
  // Requests handled at once; more wait in the kernel's accept queue.
  int threads = 4;
  int64_t max_body_bytes = 4096;  // a GET needs none
  int io_timeout_ms = 5000;       // to read a request, to write an answer
  // HTTPS with this certificate and key, and client certificates verified
  // against its CA when a client shows one; null: plain HTTP.
  std::shared_ptr<const TlsIdentity> tls;
  // "Authorization: Bearer TOKEN" accepted; "": no token.
  std::string bearer_token;
  // false: no credentials asked, even with TLS, for an endpoint that
  // checks its own (the enrolment server's one-time tokens).
  bool require_credentials = true;
  // The CA's certificate sent after the server's in the handshake, so a
  // client without the CA yet (a board enrolling) can check it against
  // the hash it was given.
  bool send_ca = false;
};

class HttpServer {
 public:
  // Listens on `listen` (HOST:PORT; port 0: any free port) and answers the
  // routes; a path no route has is 404, a method it lacks 405. With
  // `opts.tls` or `opts.bearer_token`, a request without a coordinator
  // certificate of the CA or the token is 401 before its body is read.
  // `what` names the server in errors: "shoal worker dev0 --metrics".
  static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, const std::string& what,
      std::vector<HttpRoute> routes, const HttpServerOptions& opts = {});
  // GET routes by exact path.
  static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, const std::string& what,
      const std::map<std::string, HttpHandler>& routes,
      const HttpServerOptions& opts = {});
  ~HttpServer();  // stops; requests being answered finish first

  int port() const;
  bool https() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal

#endif  // SHOAL_METRICS_HTTP_SERVER_H_
