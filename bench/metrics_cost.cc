// What a worker's metrics cost on its hot path (metrics/worker_metrics.h):
// the time of one histogram observation and one counter add, alone and
// while another thread scrapes without pause (the worst a Prometheus can
// do), and the time and size of one scrape. Prints markdown.
//   build/shoal_metrics_cost [--calls N] [--peers P] [--kinds K]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "metrics/worker_metrics.h"

namespace {

using Clock = std::chrono::steady_clock;

double NsPerCall(int64_t calls, Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
         calls;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t calls = 5'000'000;
  int peers = 32, kinds = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--calls")) calls = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--peers")) peers = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--kinds")) kinds = std::atoi(argv[i + 1]);
  }
  shoal::WorkerMetrics m;
  std::vector<prometheus::Counter*> sent;
  std::vector<prometheus::Histogram*> hist;
  for (int p = 0; p < peers; ++p) {
    sent.push_back(m.BytesSent("dev" + std::to_string(p)));
  }
  for (int k = 0; k < kinds; ++k) {
    hist.push_back(m.TaskSeconds("Kind" + std::to_string(k)));
  }
  shoal::WorkerGauges g;

  auto measure = [&](bool scraping, double* observe_ns, double* add_ns,
                     int64_t* scrapes) {
    std::atomic<bool> stop{false};
    std::atomic<int64_t> n{0};
    std::thread scraper;
    if (scraping) {
      scraper = std::thread([&] {
        while (!stop) {
          m.Scrape(g);
          n++;
        }
      });
      while (n == 0) std::this_thread::yield();
    }
    auto t0 = Clock::now();
    for (int64_t i = 0; i < calls; ++i) {
      hist[i % kinds]->Observe(0.001 * (i % 100));
    }
    *observe_ns = NsPerCall(calls, t0);
    t0 = Clock::now();
    for (int64_t i = 0; i < calls; ++i) sent[i % peers]->Increment(1024);
    *add_ns = NsPerCall(calls, t0);
    stop = true;
    if (scraper.joinable()) scraper.join();
    *scrapes = n;
  };

  double obs = 0, add = 0, obs_s = 0, add_s = 0;
  int64_t none = 0, scrapes = 0;
  measure(false, &obs, &add, &none);
  measure(true, &obs_s, &add_s, &scrapes);

  const int rounds = 200;
  size_t bytes = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < rounds; ++i) bytes = m.Scrape(g).size();
  const double scrape_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - t0).count() /
      rounds;

  std::printf(
      "%lld calls each; %d peers, %d task kinds (%d histogram series of %zu "
      "buckets)\n\n",
      static_cast<long long>(calls), peers, kinds, kinds, size_t{16});
  std::printf(
      "| what | ns per call | with a thread scraping without pause |\n");
  std::printf("|---|---:|---:|\n");
  std::printf("| `Histogram::Observe` (a task run) | %.1f | %.1f |\n", obs,
              obs_s);
  std::printf(
      "| `Counter::Increment` (a message sent or received) | %.1f | "
      "%.1f |\n",
      add, add_s);
  std::printf(
      "\none scrape: %.3f ms, %zu bytes of text (%lld scrapes ran "
      "during the second column)\n",
      scrape_ms, bytes, static_cast<long long>(scrapes));
  return 0;
}
