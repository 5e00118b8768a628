#include "util/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "util/units.h"

namespace shoal {

namespace {

constexpr int kBarWidth = 30;

std::string Amount(int64_t v, ProgressBar::Unit u) {
  if (u == ProgressBar::Unit::kCount) return std::to_string(v);
  return HumanBytes(v);
}

std::string Duration(double s) {
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof(buf), "%dh%02dm", int(s / 3600),
                  int(s / 60) % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof(buf), "%dm%02ds", int(s / 60), int(s) % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%d s", int(s + 0.5));
  }
  return buf;
}

}  // namespace

ProgressBar::ProgressBar(std::string label, int64_t total, Unit unit)
    : ProgressBar(std::move(label), total, unit, isatty(2) == 1) {}

ProgressBar::ProgressBar(std::string label, int64_t total, Unit unit, bool tty)
    : label_(std::move(label)),
      unit_(unit),
      tty_(tty),
      total_(std::max<int64_t>(0, total)),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::SetTotal(int64_t total) {
  std::lock_guard<std::mutex> l(mu_);
  total_ = std::max<int64_t>(0, total);
  DrawLocked(false);
}

void ProgressBar::AddTotal(int64_t more) {
  std::lock_guard<std::mutex> l(mu_);
  total_ += std::max<int64_t>(0, more);
  DrawLocked(false);
}

void ProgressBar::Update(int64_t done, const std::string& note) {
  std::lock_guard<std::mutex> l(mu_);
  done_ = done;
  if (!note.empty()) note_ = note;
  DrawLocked(false);
}

void ProgressBar::Add(int64_t more, const std::string& note) {
  std::lock_guard<std::mutex> l(mu_);
  done_ += more;
  if (!note.empty()) note_ = note;
  DrawLocked(false);
}

void ProgressBar::Finish() {
  std::lock_guard<std::mutex> l(mu_);
  if (finished_) return;
  finished_ = true;
  if (tty_ && drawn_) {
    std::cerr << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  }
}

std::string ProgressBar::Line() const {
  std::lock_guard<std::mutex> l(mu_);
  return LineLocked();
}

std::string ProgressBar::LineLocked() const {
  const int64_t done = std::min(done_, std::max(total_, done_));
  const int bar =
      total_ > 0 ? static_cast<int>(kBarWidth * std::min(done, total_) / total_)
                 : 0;
  std::string s = label_ + " [" + std::string(bar, '=') +
                  std::string(kBarWidth - bar, ' ') + "] ";
  if (unit_ == Unit::kBytes) {
    // "1.0/2.0 MiB" reads better than "1.0 MiB/2.0 MiB".
    s += Amount(done, unit_) + " of " + Amount(total_, unit_);
  } else {
    s += std::to_string(done) + "/" + std::to_string(total_);
  }
  const double el =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  if (el >= 0.5 && done > 0) {
    const double rate = done / el;
    if (unit_ == Unit::kBytes) {
      s += ", " + Amount(static_cast<int64_t>(rate), unit_) + "/s";
    }
    if (total_ > done) s += ", " + Duration((total_ - done) / rate) + " left";
  }
  if (!note_.empty()) s += "  " + note_;
  return s;
}

void ProgressBar::DrawLocked(bool force) {
  if (!tty_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  const std::string line = LineLocked();
  // Pad over what the last line left.
  const size_t pad = width_ > line.size() ? width_ - line.size() : 0;
  width_ = line.size();
  std::cerr << "\r" << line << std::string(pad, ' ') << std::flush;
}

}  // namespace shoal
