// A progress line on a terminal's stderr: a bar, how much of how much (a
// count, or bytes in human units), the rate and the time left, redrawn in
// place at most every 100 ms and cleared when done. Quiet when stderr is
// not a terminal (a log, a test), so scripts see only results. Update may
// be called from any thread.
#ifndef SHOAL_UTIL_PROGRESS_BAR_H_
#define SHOAL_UTIL_PROGRESS_BAR_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace shoal {

class ProgressBar {
 public:
  enum class Unit { kCount, kBytes };
  // `label` starts the line ("deploying"); `total` may grow later.
  ProgressBar(std::string label, int64_t total, Unit unit);
  // Draws nothing when `tty` is false.
  ProgressBar(std::string label, int64_t total, Unit unit, bool tty);
  ~ProgressBar();  // Finish()

  void SetTotal(int64_t total);
  void AddTotal(int64_t more);
  // `done` of the total so far, and an optional note after the numbers.
  void Update(int64_t done, const std::string& note = "");
  void Add(int64_t more, const std::string& note = "");
  // Clears the line (once).
  void Finish();

  // The line as drawn, for tests: "deploying [=====     ] 1.0/2.0 MiB,
  // 0.5 MiB/s, 2 s left".
  std::string Line() const;

 private:
  void DrawLocked(bool force);
  std::string LineLocked() const;

  mutable std::mutex mu_;
  const std::string label_;
  const Unit unit_;
  const bool tty_;
  int64_t total_ = 0, done_ = 0;
  std::string note_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false, finished_ = false;
  size_t width_ = 0;  // of the last line drawn
};

}  // namespace shoal

#endif  // SHOAL_UTIL_PROGRESS_BAR_H_
