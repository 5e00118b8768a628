#include "metrics/http_server.h"

#include <httplib.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

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

}  // namespace

struct HttpServer::Impl {
  httplib::Server server;
  std::thread thread;
  int port = 0;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int HttpServer::port() const { return impl_->port; }

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, const std::string& what,
    std::map<std::string, HttpHandler> routes, const HttpServerOptions& opts) {
  auto hp = SplitHostPort(listen, what);
  if (!hp.ok()) return hp.status();
  if (hp->port < 0 || hp->port > 65535 || hp->host.empty()) {
    return InvalidArgument(what + " " + listen +
                           ": give HOST:PORT, e.g. 127.0.0.1:9100");
  }
  auto impl = std::make_unique<Impl>();
  httplib::Server& s = impl->server;
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
  for (auto& [path, handler] : routes) {
    s.Get(path, [h = handler](const httplib::Request&, httplib::Response& res) {
      HttpReply r;
      try {
        r = h();
      } catch (const std::exception& e) {
        // A page that cannot be made is an answer, never a dead thread.
        r.status = 500;
        r.body = std::string("internal error: ") + e.what() + "\n";
      }
      res.status = r.status;
      res.set_header("Cache-Control", "no-store");
      res.set_content(std::move(r.body), r.content_type);
    });
  }
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404) {
      res.set_content("no page " + req.path + "\n",
                      "text/plain; charset=utf-8");
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
  Impl* p = impl.get();
  impl->thread = std::thread([p] { p->server.listen_after_bind(); });
  // stop() before the thread runs would be missed, and the destructor wait
  // for ever: return once it listens (at once, in practice).
  for (int i = 0; i < 2000 && !impl->server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace shoal
