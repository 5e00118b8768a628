#include "runtime/link_shaper.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "util/clock.h"

namespace shoal {

namespace {

using Clock = std::chrono::steady_clock;

// The mapped page: the channel's clock first, the rest unused.
constexpr size_t kMediumFileBytes = 4096;

}  // namespace

StatusOr<std::shared_ptr<SharedMedium>> SharedMedium::Open(
    const std::string& path, Medium medium) {
  static_assert(std::atomic_ref<int64_t>::is_always_lock_free,
                "the channel's clock is shared between processes");
  if (!medium.shared || !(medium.bandwidth_bps > 0)) {
    return InvalidArgument("shared medium " + path +
                           ": needs a positive bandwidth");
  }
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Unavailable("cannot open the shared medium's file " + path + ": " +
                       std::strerror(errno));
  }
  // Every process sizes it alike; a fresh file reads as zeros (free now).
  if (ftruncate(fd, kMediumFileBytes) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return Unavailable("cannot size the shared medium's file " + path + ": " +
                       why);
  }
  void* p = mmap(nullptr, kMediumFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                 fd, 0);
  const int mmap_errno = errno;
  close(fd);
  if (p == MAP_FAILED) {
    return Unavailable("cannot map the shared medium's file " + path + ": " +
                       std::strerror(mmap_errno));
  }
  return std::shared_ptr<SharedMedium>(
      new SharedMedium(path, medium, static_cast<int64_t*>(p)));
}

SharedMedium::~SharedMedium() { munmap(clock_, kMediumFileBytes); }

Clock::time_point SharedMedium::Hold(Clock::time_point earliest,
                                     double seconds) {
  std::atomic_ref<int64_t> clock(*clock_);
  const int64_t want = earliest.time_since_epoch().count();
  const int64_t length = SteadySeconds(seconds).count();
  // A clock more than an hour ahead of this message is no queue of real
  // messages but a damaged file: start from now rather than sleep on it.
  const int64_t sane =
      want + std::chrono::duration_cast<Clock::duration>(std::chrono::hours(1))
                 .count();
  int64_t seen = clock.load();
  int64_t end;
  do {
    end = (seen > want && seen < sane ? seen : want) + length;
  } while (!clock.compare_exchange_weak(seen, end));
  return Clock::time_point(Clock::duration(end));
}

Clock::time_point LinkShaper::Transmit(int64_t bytes,
                                       Clock::time_point earliest) {
  if (!active()) return earliest;
  Clock::time_point done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto start = std::max(earliest, free_at_);
    const double tx_s =
        link_.bandwidth_bps > 0 ? bytes * 8.0 / link_.bandwidth_bps : 0.0;
    if (medium_) {
      const double air_s = medium_->medium().Airtime(bytes);
      free_at_ = medium_->Hold(start, std::max(tx_s, air_s));
    } else {
      free_at_ = start + SteadySeconds(tx_s);
    }
    done = free_at_;
  }
  const auto through = done + SteadySeconds(link_.latency_s);
  std::this_thread::sleep_until(through);
  return through;
}

}  // namespace shoal
