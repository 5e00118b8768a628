#include "plan/plan_svg.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include "util/svg_text.h"
#include "util/units.h"

namespace shoal {

namespace {

// Layout, in SVG user units.
constexpr double kLeft = 120;     // device names
constexpr double kTop = 58;       // title, summary, column captions
constexpr double kColW = 150;     // one step of the task graph
constexpr double kRowH = 64;      // one device
constexpr double kBoxW = 118;     // a task box
constexpr double kPad = 8;        // inside a row, around the boxes
constexpr int kMaxCycle = 64;     // requests considered for round robins
constexpr int kLabelArrows = 24;  // more arrows: bytes per column instead

const char* kColors[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                         "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                         "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

// Fits `s` in `chars` characters, ending in ".." when cut.
std::string Fit(const std::string& s, size_t chars) {
  return s.size() <= chars ? s : s.substr(0, chars - 2) + "..";
}

struct Box {
  double x, y, h;
};

// Where everything goes: a column per step of the task graph (the input at
// 0, each task right of the latest it reads from, the output last) and a
// box per (task, device), stacked when a cell holds several.
struct Layout {
  std::map<int, int> col;  // task -> column
  int n_col = 0;
  std::map<std::pair<int, int>, Box> boxes;  // (task, device) -> box
};

Layout LayOut(const Plan& p) {
  Layout l;
  l.col[kModelInput] = 0;
  int last = 0;
  for (const Task& t : p.tasks) {
    int c = 1;
    for (const Transfer& x : p.transfers) {
      if (x.dst.task != t.id) continue;
      auto it = l.col.find(x.src.task);
      if (it != l.col.end()) c = std::max(c, it->second + 1);
    }
    l.col[t.id] = c;
    last = std::max(last, c);
  }
  l.col[kModelOutput] = last + 1;
  l.n_col = last + 2;
  std::map<std::pair<int, int>, std::vector<int>> cells;
  cells[{0, p.input_device}].push_back(kModelInput);
  for (const Task& t : p.tasks) {
    for (int d : t.Replicas()) cells[{l.col[t.id], d}].push_back(t.id);
  }
  cells[{l.n_col - 1, p.output_device}].push_back(kModelOutput);
  for (const auto& [cell, ids] : cells) {
    const double h = (kRowH - 2 * kPad - 4.0 * (ids.size() - 1)) / ids.size();
    for (size_t i = 0; i < ids.size(); ++i) {
      l.boxes[{ids[i], cell.second}] = {
          kLeft + cell.first * kColW + (kColW - kBoxW) / 2,
          kTop + cell.second * kRowH + kPad + i * (h + 4), h};
    }
  }
  return l;
}

// Transfers per request, over one cycle of the round robins: (src task,
// dst task, src device, dst device) -> bytes and a tooltip.
struct Flows {
  using Key = std::tuple<int, int, int, int>;
  std::map<Key, double> bytes;
  std::map<Key, std::string> tips;
  double most = 1, cross_total = 0;  // of the arrows between devices
  int crossing = 0;
};

// The tensors an arrow carries, as the first request of the cycle sends
// them; a pair of devices only later requests use has none.
std::string Tip(const Flows& f, const Flows::Key& k) {
  auto it = f.tips.find(k);
  return it == f.tips.end() ? std::string() : it->second;
}

Flows CountFlows(const Plan& p) {
  int64_t cycle = 1;
  for (const Task& t : p.tasks) {
    const int64_t n = std::max<int64_t>(1, t.devices.size());
    const int64_t l = std::lcm(cycle, n);
    if (l > kMaxCycle) break;
    cycle = l;
  }
  Flows f;
  for (int64_t seq = 0; seq < cycle; ++seq) {
    for (const Transfer& x : p.transfers) {
      const Flows::Key k{x.src.task, x.dst.task, p.DeviceOf(x.src.task, seq),
                         p.DeviceOf(x.dst.task, seq)};
      f.bytes[k] += static_cast<double>(p.WireBytes(x)) / cycle;
      if (seq == 0 && f.tips[k].size() < 400) {
        f.tips[k] += x.src.tensor + " " + x.src.region.ToString() + " -> " +
                     x.dst.tensor + "; ";
      }
    }
  }
  for (const auto& [k, b] : f.bytes) {
    if (std::get<2>(k) == std::get<3>(k)) continue;
    f.most = std::max(f.most, b);
    f.cross_total += b;
    ++f.crossing;
  }
  return f;
}

void DrawHeader(const Plan& p, const std::string& title, const Flows& f,
                double width, double height, std::ostream& o) {
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << SvgNum(width)
    << "\" height=\"" << SvgNum(height) << "\" viewBox=\"0 0 " << SvgNum(width)
    << " " << SvgNum(height)
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" "
       "refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"8\" "
       "markerHeight=\"8\" orient=\"auto\">"
       "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c0392b\"/></marker></defs>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">"
    << SvgEscape(title) << "</text>\n";
  o << "<text x=\"10\" y=\"36\">"
    << SvgEscape(
           "strategy " + p.strategy + ", " + std::to_string(p.devices.size()) +
           " devices, " + std::to_string(p.tasks.size()) + " tasks; " +
           HumanBytes(static_cast<int64_t>(f.cross_total)) +
           " between devices per request in " + std::to_string(f.crossing) +
           " arrows (thicker: more bytes; hover a box or an arrow for "
           "details)")
    << "</text>\n";
}

void DrawDeviceRows(const Plan& p, double width, std::ostream& o) {
  for (size_t d = 0; d < p.devices.size(); ++d) {
    const double y = kTop + d * kRowH;
    o << "<rect x=\"0\" y=\"" << SvgNum(y) << "\" width=\"" << SvgNum(width)
      << "\" height=\"" << SvgNum(kRowH) << "\" fill=\""
      << (d % 2 ? "#f7f7f7" : "#ffffff") << "\"/>\n";
    std::ostringstream share;
    share << "speed " << p.devices[d].share;
    o << "<text x=\"8\" y=\"" << SvgNum(y + kRowH / 2 - 2)
      << "\" font-weight=\"bold\">" << SvgEscape(Fit(p.devices[d].name, 16))
      << "</text><text x=\"8\" y=\"" << SvgNum(y + kRowH / 2 + 12)
      << "\" fill=\"#555\">" << SvgEscape(share.str()) << "</text>\n";
  }
}

// Arrows under the boxes: local ones faint, crossing ones red, thicker for
// more bytes. Every arrow is labelled where that stays readable; a big
// plan's bytes are summed per column instead, below the rows.
void DrawArrows(const Plan& p, const Layout& l, const Flows& f,
                std::ostream& o) {
  std::map<int, double> gap_bytes;  // by the column arrows lead into
  for (const auto& [k, b] : f.bytes) {
    const auto [src, dst, ds, dd] = k;
    auto a = l.boxes.find({src, ds});
    auto z = l.boxes.find({dst, dd});
    if (a == l.boxes.end() || z == l.boxes.end()) continue;
    const double x1 = a->second.x + kBoxW, y1 = a->second.y + a->second.h / 2;
    const double x2 = z->second.x, y2 = z->second.y + z->second.h / 2;
    if (ds == dd) {
      o << "<line x1=\"" << SvgNum(x1) << "\" y1=\"" << SvgNum(y1) << "\" x2=\""
        << SvgNum(x2) << "\" y2=\"" << SvgNum(y2)
        << "\" stroke=\"#bbb\" stroke-width=\"1\"/>\n";
      continue;
    }
    const double w = 1 + 4 * std::sqrt(b / f.most);
    const std::string tip = p.devices[ds].name + " -> " + p.devices[dd].name +
                            ": " + HumanBytes(static_cast<int64_t>(b)) +
                            " per request; " + Tip(f, k);
    o << "<g><title>" << SvgEscape(tip) << "</title><line x1=\"" << SvgNum(x1)
      << "\" y1=\"" << SvgNum(y1) << "\" x2=\"" << SvgNum(x2) << "\" y2=\""
      << SvgNum(y2) << "\" stroke=\"#c0392b\" stroke-opacity=\""
      << "0.7\" stroke-width=\"" << SvgNum(w)
      << "\" marker-end=\"url(#arrow)\"/>";
    gap_bytes[l.col.at(dst)] += b;
    if (f.crossing <= kLabelArrows) {
      o << "<text x=\"" << SvgNum((x1 + x2) / 2) << "\" y=\""
        << SvgNum((y1 + y2) / 2 - 3)
        << "\" font-size=\"9\" text-anchor=\"middle\" fill=\"#7b241c\">"
        << HumanBytes(static_cast<int64_t>(b)) << "</text>";
    }
    o << "</g>\n";
  }
  if (f.crossing > kLabelArrows) {
    const double y = kTop + p.devices.size() * kRowH + 16;
    o << "<text x=\"8\" y=\"" << SvgNum(y) << "\" fill=\"#7b241c\">"
      << "into the step:</text>\n";
    for (const auto& [c, b] : gap_bytes) {
      o << "<text x=\"" << SvgNum(kLeft + c * kColW + kColW / 2) << "\" y=\""
        << SvgNum(y) << "\" text-anchor=\"middle\" fill=\"#7b241c\">"
        << HumanBytes(static_cast<int64_t>(b)) << "</text>\n";
    }
  }
}

void DrawBoxes(const Plan& p, const Layout& l, std::ostream& o) {
  for (const auto& [key, box] : l.boxes) {
    const auto [id, d] = key;
    std::string label, tip;
    const char* fill = kColors[d % 12];
    if (id == kModelInput) {
      label = "input";
      tip = "model input " + p.input_name + " " + ShapeToString(p.input_shape) +
            (p.input_pixels ? ", sent as 8-bit pixels" : "");
      fill = "#ffffff";
    } else if (id == kModelOutput) {
      label = "output";
      tip =
          "model output " + p.output_name + " " + ShapeToString(p.output_shape);
      fill = "#ffffff";
    } else {
      const Task& t = p.tasks[id];
      label = t.layer.empty() ? t.name : t.layer;
      tip = "task " + std::to_string(t.id) + " " + t.name + " (" + t.scheme +
            "), " + std::to_string(t.fragment.nodes.size()) + " nodes on " +
            p.devices[d].name;
    }
    o << "<g><title>" << SvgEscape(tip) << "</title><rect x=\"" << SvgNum(box.x)
      << "\" y=\"" << SvgNum(box.y) << "\" width=\"" << SvgNum(kBoxW)
      << "\" height=\"" << SvgNum(box.h) << "\" rx=\"4\" fill=\"" << fill
      << "\" stroke=\"#333\"/>";
    if (box.h >= 11) {
      o << "<text x=\"" << SvgNum(box.x + kBoxW / 2) << "\" y=\""
        << SvgNum(box.y + box.h / 2 + 4)
        << "\" text-anchor=\"middle\" font-size=\""
        << (box.h >= 16 ? "10" : "8") << "\">" << SvgEscape(Fit(label, 20))
        << "</text>";
    }
    o << "</g>\n";
  }
}

}  // namespace

std::string PlanSvg(const Plan& p, const std::string& title) {
  const Layout l = LayOut(p);
  const Flows f = CountFlows(p);
  const double width = kLeft + l.n_col * kColW + 20;
  const double height = kTop + p.devices.size() * kRowH + 30;
  std::ostringstream o;
  DrawHeader(p, title, f, width, height, o);
  DrawDeviceRows(p, width, o);
  DrawArrows(p, l, f, o);
  DrawBoxes(p, l, o);
  o << "</svg>\n";
  return o.str();
}

Status WritePlanSvg(const Plan& p, const std::string& path,
                    const std::string& title) {
  std::ofstream f(path);
  if (!f) return InvalidArgument("cannot write plan picture " + path);
  f << PlanSvg(p, title);
  f.close();
  if (!f) return InvalidArgument("cannot write plan picture " + path);
  return Status::Ok();
}

}  // namespace shoal
