#include "plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace chorus::bench {

namespace {

// gnuplot reads inline data blocks, so one script file carries everything.
std::string script(const std::string& out, const std::string& title,
                   const std::vector<PlotSeries>& series) {
  std::string s;
  s += out.ends_with(".png") ? "set terminal pngcairo size 1200,500 font ',10'\n"
                             : "set terminal svg size 1200,500 dynamic font ',10'\n";
  s += "set output '" + out + "'\n";
  for (size_t i = 0; i < series.size(); ++i) {
    s += "$d" + std::to_string(i) + " << EOD\n";
    const PlotSeries& p = series[i];
    for (size_t k = 0; k < p.bytes.size(); ++k)
      s += std::to_string(p.bytes[k]) + " " + std::to_string(p.busbw[k]) + " " +
           std::to_string(p.us[k]) + "\n";
    s += "EOD\n";
  }
  s += "set multiplot layout 1,2 title '" + title + "'\n";
  s += "set logscale x 2\nset format x '%.0b%B'\nset xlabel 'message size (bytes)'\n"
       "set grid\nset key top left\nset format y '%g'\n";
  for (int panel = 0; panel < 2; ++panel) {
    s += panel == 0
             ? "set ylabel 'busbw (GB/s)'\nset logscale y 10\nset title 'bus bandwidth'\n"
             : "set ylabel 'time (us)'\nset logscale y 10\nset title 'time per call (median)'\n";
    s += "plot ";
    for (size_t i = 0; i < series.size(); ++i) {
      if (i) s += ", ";
      // busbw of 0 (tiny sizes) cannot sit on a log axis; gnuplot skips the NaN.
      s += "$d" + std::to_string(i) + (panel == 0 ? " using 1:($2>0?$2:NaN)" : " using 1:3") +
           " with linespoints lw 2 title '" + series[i].name + "'";
    }
    s += "\n";
  }
  s += "unset multiplot\n";
  return s;
}

}  // namespace

bool plotSeries(const std::string& outPath, const std::string& title,
                const std::vector<PlotSeries>& series, std::string* err) {
  if (!outPath.ends_with(".svg") && !outPath.ends_with(".png")) {
    *err = "--plot wants a file ending in .svg or .png, not '" + outPath + "'";
    return false;
  }
  char path[] = "/tmp/chorus-bench-plot-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    *err = "cannot create a temporary file in /tmp for the gnuplot script";
    return false;
  }
  std::string text = script(outPath, title, series);
  bool wrote = write(fd, text.data(), text.size()) == ssize_t(text.size());
  close(fd);
  int rc = wrote ? system(("gnuplot " + std::string(path) + " 2>&1").c_str()) : -1;
  unlink(path);
  if (rc != 0) {
    *err = wrote && WIFEXITED(rc) && WEXITSTATUS(rc) == 127
               ? "gnuplot not found (install gnuplot-nox)"
               : "gnuplot failed drawing " + outPath;
    return false;
  }
  return true;
}

}  // namespace chorus::bench
