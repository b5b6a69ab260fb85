// Pictures of a sweep: bus bandwidth and time against message size, log scales, one line per
// implementation, drawn by gnuplot (Debian's gnuplot-nox) into .svg or .png.
#pragma once

#include <string>
#include <vector>

namespace chorus::bench {

struct PlotSeries {
  std::string name;  // legend: "chorus", "mpi", "gloo"
  std::vector<double> bytes, busbw, us;
};

// Writes the picture to outPath (format from its extension). False with *err on failure,
// including "gnuplot not found".
bool plotSeries(const std::string& outPath, const std::string& title,
                const std::vector<PlotSeries>& series, std::string* err);

}  // namespace chorus::bench
