// Minimal SVG line charts, so `retra stats --plot` needs no plotting package.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace retra::plot {

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
};

struct Options {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 960;
  int height = 600;
};

std::string svg_lines(const std::vector<Series>& series, const Options& opt);

}  // namespace retra::plot
