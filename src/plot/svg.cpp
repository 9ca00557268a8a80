// SVG line chart renderer: axes with "nice" ticks, one polyline per series, a legend.
// Thread safety: pure functions.
#include "src/plot/plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace retra::plot {

namespace {

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// A tick step of 1, 2 or 5 times a power of ten giving about `target` ticks.
double nice_step(double span, int target) {
  if (span <= 0) return 1;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

// Colours run from blue (first series) to red (last) through the HSL wheel.
std::string colour(std::size_t i, std::size_t n) {
  const double t = n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.0;
  return fmt::format("hsl({:.0f},70%,45%)", 240.0 * (1.0 - t));
}

}  // namespace

std::string svg_lines(const std::vector<Series>& series, const Options& opt) {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool first = true;
  for (const auto& s : series)
    for (auto [x, y] : s.points) {
      if (first) {
        x0 = x1 = x;
        y0 = y1 = y;
        first = false;
      }
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  y0 = std::min(y0, 0.0);
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  const double xs = nice_step(x1 - x0, 10), ys = nice_step(y1 - y0, 8);
  x0 = std::floor(x0 / xs) * xs;
  x1 = std::ceil(x1 / xs) * xs;
  y1 = std::ceil(y1 / ys) * ys;

  const double left = 80, right = 170, top = 50, bottom = 60;
  const double w = opt.width - left - right, h = opt.height - top - bottom;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * w; };
  auto py = [&](double y) { return top + h - (y - y0) / (y1 - y0) * h; };

  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      opt.width, opt.height, opt.width, opt.height);
  o += fmt::format("<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">{}</text>\n",
                   left + w / 2, escape(opt.title));
  for (double y = y0; y <= y1 + ys / 2; y += ys) {
    o += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"#ddd\"/>\n<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}"
        "</text>\n",
        left, py(y), left + w, py(y), left - 6, py(y) + 4, y);
  }
  for (double x = x0; x <= x1 + xs / 2; x += xs) {
    o += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"#eee\"/>\n<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">"
        "{:g}</text>\n",
        px(x), top, px(x), top + h, px(x), top + h + 18, x);
  }
  o += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"black\"/>\n",
      left, top, w, h);
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + w / 2,
                   opt.height - 15, escape(opt.x_label));
  o += fmt::format(
      "<text transform=\"translate(20,{}) rotate(-90)\" text-anchor=\"middle\">{}"
      "</text>\n",
      top + h / 2, escape(opt.y_label));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    std::string pts;
    for (auto [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    o += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
                     colour(i, series.size()), pts);
    const double ly = top + 10 + 16.0 * static_cast<double>(i);
    o += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
        left + w + 15, ly, left + w + 40, ly, colour(i, series.size()), left + w + 46, ly + 4,
        escape(s.label));
  }
  o += "</svg>\n";
  return o;
}

}  // namespace retra::plot
