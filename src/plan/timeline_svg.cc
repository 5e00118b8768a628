#include "plan/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "util/svg_text.h"
#include "util/units.h"

namespace shoal {

namespace {

// Layout, in SVG user units (pixels at 100 %).
constexpr double kLeft = 110;     // device names
constexpr double kPlot = 960;     // the time axis
constexpr double kTop = 46;       // title and axis labels
constexpr double kLane = 18;      // one lane
constexpr double kRowGap = 10;    // between devices
constexpr double kMinLabel = 46;  // a box this wide or more gets its name

std::string Escape(const std::string& s) { return SvgEscape(s); }
std::string Num(double v) { return SvgNum(v); }

std::string Ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f ms", s * 1e3);
  return buf;
}

// A tick step of 1, 2 or 5 times a power of ten giving 5 to 10 ticks.
double TickStep(double span_s) {
  const double raw = span_s / 8;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

}  // namespace

int64_t TimelineRequest(const std::vector<TraceSpan>& spans) {
  std::vector<std::pair<double, int64_t>> requests;
  int64_t last = -1;
  for (const auto& s : spans) {
    last = std::max(last, s.seq);
    if (s.kind == TraceSpan::Kind::kRequest) {
      requests.push_back({s.end_s - s.start_s, s.seq});
    }
  }
  if (requests.empty()) return last;
  std::sort(requests.begin(), requests.end());
  return requests[(requests.size() - 1) / 2].second;
}

std::string TimelineSvg(const Plan& p, const std::vector<TraceSpan>& spans,
                        const std::string& title, int64_t seq,
                        double axis_s) {
  if (seq < 0) seq = TimelineRequest(spans);
  std::vector<const TraceSpan*> mine;
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  for (const auto& s : spans) {
    if (s.seq != seq) continue;
    mine.push_back(&s);
    t0 = std::min(t0, s.kind == TraceSpan::Kind::kRequest
                          ? s.start_s
                          : std::min(s.ready_s, s.start_s));
    t1 = std::max(t1, s.end_s);
  }
  if (mine.empty()) t0 = t1 = 0;
  // The axis: this request, or the length asked for so that another
  // timeline drawn to it (measured beside predicted) shares its scale.
  const double span_s = std::max({t1 - t0, axis_s, 1e-6});
  auto x = [&](double t) { return kLeft + (t - t0) / span_s * kPlot; };
  const int nd = static_cast<int>(p.devices.size());
  const double row = 2 * kLane + kRowGap;
  const double height = kTop + nd * row + 40;
  const double width = kLeft + kPlot + 20;
  auto lane_y = [&](int device, bool send) {
    return kTop + device * row + (send ? kLane : 0);
  };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(width)
    << "\" height=\"" << Num(height) << "\" viewBox=\"0 0 " << Num(width) << " "
    << Num(height) << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << Num(kLeft) << "\" y=\"16\" font-size=\"13\">"
    << Escape(title) << " (request " << seq << ", " << Ms(t1 - t0)
    << (axis_s > t1 - t0 ? "; axis to " + Ms(axis_s) : std::string())
    << ")</text>\n";
  // Time axis: ticks and a grid.
  const double step = TickStep(span_s);
  for (double t = 0; t <= span_s + 1e-9; t += step) {
    const double tx = x(t0 + t);
    o << "<line x1=\"" << Num(tx) << "\" y1=\"" << Num(kTop - 6) << "\" x2=\""
      << Num(tx) << "\" y2=\"" << Num(kTop + nd * row) << "\" stroke=\"#ddd\"/>"
      << "<text x=\"" << Num(tx) << "\" y=\"" << Num(kTop - 10)
      << "\" text-anchor=\"middle\" fill=\"#555\">" << Num(t * 1e3)
      << "</text>\n";
  }
  // Devices and their lanes.
  for (int d = 0; d < nd; ++d) {
    o << "<text x=\"6\" y=\"" << Num(lane_y(d, false) + 13) << "\">"
      << Escape(p.devices[d].name) << "</text>"
      << "<text x=\"6\" y=\"" << Num(lane_y(d, true) + 13)
      << "\" fill=\"#888\">send</text>\n";
  }
  const int nt = static_cast<int>(p.tasks.size());
  const int nx = static_cast<int>(p.transfers.size());
  for (const TraceSpan* s : mine) {
    if (s->device < 0 || s->device >= nd) continue;  // the request itself
    const bool send = s->kind == TraceSpan::Kind::kSend;
    const double y = lane_y(s->device, send) + 2;
    const double bx = x(s->start_s);
    const double bw = std::max(1.0, x(s->end_s) - bx);
    std::string name, tip;
    if (send) {
      std::string to = "?";
      int64_t bytes = 0;
      if (s->item >= 0 && s->item < nx) {
        const Transfer& t = p.transfers[s->item];
        to = t.dst.task == kModelOutput
                 ? std::string("coordinator")
                 : p.devices[p.DeviceOf(t.dst.task, s->seq)].name;
        bytes = p.WireBytes(t);
      }
      name = "to " + to;
      tip = name + ", " + HumanBytes(bytes) + ": " + Ms(s->end_s - s->start_s) +
            " after " + Ms(s->start_s - s->ready_s) + " queued";
    } else {
      name = s->item >= 0 && s->item < nt ? p.tasks[s->item].name
                                          : "task " + std::to_string(s->item);
      tip = name + ": " + Ms(s->end_s - s->start_s) + ", waited " +
            Ms(s->start_s - s->ready_s) + " for the device";
      // Waiting for the device: from the last input to the start.
      if (s->start_s > s->ready_s) {
        o << "<line x1=\"" << Num(x(s->ready_s)) << "\" y1=\""
          << Num(y + kLane / 2 - 1) << "\" x2=\"" << Num(bx) << "\" y2=\""
          << Num(y + kLane / 2 - 1) << "\" stroke=\"#999\"/>\n";
      }
    }
    o << "<g><title>" << Escape(tip) << "</title><rect x=\"" << Num(bx)
      << "\" y=\"" << Num(y) << "\" width=\"" << Num(bw) << "\" height=\""
      << Num(kLane - 4) << "\" fill=\"" << (send ? "#f0a040" : "#4a7fc1")
      << "\" stroke=\"white\" stroke-width=\"0.5\"/>";
    if (bw >= kMinLabel) {
      // Clipped to its box by length: about 6 units a character.
      std::string label = name;
      const size_t fits = static_cast<size_t>((bw - 4) / 6);
      if (label.size() > fits) label = label.substr(0, fits);
      o << "<text x=\"" << Num(bx + 2) << "\" y=\"" << Num(y + kLane - 8)
        << "\" fill=\"white\" font-size=\"9\">" << Escape(label) << "</text>";
    }
    o << "</g>\n";
  }
  // Legend.
  const double ly = kTop + nd * row + 22;
  o << "<rect x=\"" << Num(kLeft) << "\" y=\"" << Num(ly - 10)
    << "\" width=\"12\" height=\"10\" fill=\"#4a7fc1\"/><text x=\""
    << Num(kLeft + 16) << "\" y=\"" << Num(ly)
    << "\">compute (a task run)</text>"
    << "<line x1=\"" << Num(kLeft + 150) << "\" y1=\"" << Num(ly - 5)
    << "\" x2=\"" << Num(kLeft + 165) << "\" y2=\"" << Num(ly - 5)
    << "\" stroke=\"#999\"/><text x=\"" << Num(kLeft + 170) << "\" y=\""
    << Num(ly) << "\">waiting for the device</text>"
    << "<rect x=\"" << Num(kLeft + 320) << "\" y=\"" << Num(ly - 10)
    << "\" width=\"12\" height=\"10\" fill=\"#f0a040\"/><text x=\""
    << Num(kLeft + 336) << "\" y=\"" << Num(ly)
    << "\">a message on the device's link</text><text x=\""
    << Num(kLeft + kPlot) << "\" y=\"" << Num(ly)
    << "\" text-anchor=\"end\" fill=\"#555\">ms from the request's "
       "start</text>\n";
  o << "</svg>\n";
  return o.str();
}

Status WriteTimelineSvg(const std::string& path, const Plan& p,
                        const std::vector<TraceSpan>& spans,
                        const std::string& title, double axis_s) {
  if (spans.empty()) {
    return InvalidArgument("no spans to draw in timeline " + path);
  }
  std::ofstream f(path);
  if (!f) return InvalidArgument("cannot write timeline file " + path);
  f << TimelineSvg(p, spans, title, -1, axis_s);
  if (!f) return InvalidArgument("error writing timeline file " + path);
  return Status::Ok();
}

}  // namespace shoal
