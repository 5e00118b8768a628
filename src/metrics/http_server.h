// A small HTTP server for read-only pages: the Prometheus endpoint of
// `shoal worker --metrics` and `shoal serve --metrics`, and the dashboard of
// `shoal serve --dashboard`. cpp-httplib (Debian's libcpp-httplib-dev) does
// the HTTP; this file holds the bounds every endpoint gets: GET only, no
// request body beyond a few KiB, 5 s to read a request or write an answer,
// a handful of threads, and a clear error when the address cannot be bound.
#ifndef SHOAL_METRICS_HTTP_SERVER_H_
#define SHOAL_METRICS_HTTP_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "util/status.h"

namespace shoal {

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Called on one of the server's threads, possibly several at once.
using HttpHandler = std::function<HttpReply()>;

struct HttpServerOptions {
  // Requests handled at once; more wait in the kernel's accept queue.
  int threads = 4;
  int64_t max_body_bytes = 4096;  // a GET needs none
  int io_timeout_ms = 5000;       // to read a request, to write an answer
};

class HttpServer {
 public:
  // Listens on `listen` (HOST:PORT; port 0: any free port) and serves
  // GET `path` with `routes[path]`; other paths are 404. `what` names the
  // server in errors: "shoal worker dev0 --metrics".
  static StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, const std::string& what,
      std::map<std::string, HttpHandler> routes,
      const HttpServerOptions& opts = {});
  ~HttpServer();  // stops; requests being answered finish first

  int port() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal

#endif  // SHOAL_METRICS_HTTP_SERVER_H_
