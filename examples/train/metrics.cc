#include "metrics.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace train {

Progress::Progress(bool enabled, const std::string& strategy, int epoch, int64_t steps)
    : enabled_(enabled), tty_(isatty(1)), strategy_(strategy), epoch_(epoch), steps_(steps) {}

void Progress::update(int64_t step, double loss, double samplesPerS) {
  if (!enabled_ || steps_ <= 0) return;
  const int decile = int(step * 10 / steps_);
  if (tty_) {
    if (step % 8 && step != steps_) return;
    const int width = 30, filled = int(step * width / steps_);
    printf("\r%s epoch %d [%.*s%*s] %lld/%lld loss %.4f %.0f samples/s", strategy_.c_str(), epoch_,
           filled, "==============================", width - filled, "", (long long)step,
           (long long)steps_, loss, samplesPerS);
    fflush(stdout);
  } else if (decile > lastDecile_) {
    lastDecile_ = decile;
    printf("%s epoch %d %3d%% step %lld/%lld loss %.4f %.0f samples/s\n", strategy_.c_str(), epoch_,
           decile * 10, (long long)step, (long long)steps_, loss, samplesPerS);
    fflush(stdout);
  }
}

void Progress::done() {
  if (enabled_ && tty_) printf("\n");
}

std::vector<double> packRecords(const std::vector<EpochRecord>& r) {
  std::vector<double> d;
  for (const EpochRecord& e : r)
    d.insert(d.end(), {double(e.epoch), e.trainLoss, e.testAccuracy, e.samplesPerS, e.commS,
                       e.computeS, e.waitS, e.wallS});
  return d;
}

std::vector<EpochRecord> unpackRecords(const std::vector<double>& d) {
  std::vector<EpochRecord> r(d.size() / 8);
  for (size_t i = 0; i < r.size(); ++i) {
    const double* p = d.data() + 8 * i;
    r[i] = {int(p[0]), p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
  }
  return r;
}

std::string formatEpoch(const EpochRecord& r, int epochs) {
  char buf[320];
  const double hidden = r.commS > 0 ? 100.0 * (1.0 - r.waitS / r.commS) : 0;
  snprintf(buf, sizeof buf,
           "epoch %d/%d: train_loss %.4f  test_accuracy %.2f%%  %.0f samples/s  %.2fs = compute "
           "%.2fs + waiting %.2fs (communication %.2fs, %.0f%% of it hidden)",
           r.epoch, epochs, r.trainLoss, 100 * r.testAccuracy, r.samplesPerS, r.wallS, r.computeS,
           r.waitS, r.commS, hidden < 0 ? 0 : hidden);
  return buf;
}

namespace {

// A float as the decimal it was given as (0.05, not the double 0.05000000074505806).
double asDecimal(float x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.7g", double(x));
  return strtod(buf, nullptr);
}

}  // namespace

chorus::Status writeMetricsJson(const std::string& path, const RunInfo& info,
                                const std::vector<EpochRecord>& history,
                                const std::vector<float>& stepLoss) {
  nlohmann::ordered_json epochs = nlohmann::ordered_json::array();
  for (const EpochRecord& r : history)
    epochs.push_back({{"epoch", r.epoch},
                      {"train_loss", r.trainLoss},
                      {"test_accuracy", r.testAccuracy},
                      {"samples_per_s", r.samplesPerS},
                      {"comm_s", r.commS},
                      {"compute_s", r.computeS},
                      {"wait_s", r.waitS},
                      {"wall_s", r.wallS}});
  const nlohmann::ordered_json j = {{"strategy", info.strategy},
                                    {"param_bytes", info.paramBytes},
                                    {"optimizer_bytes", info.optimizerBytes},
                                    {"ranks", info.ranks},
                                    {"batch", info.batch},
                                    {"lr", asDecimal(info.lr)},
                                    {"lr_schedule", info.lrSchedule},
                                    {"overlap", info.overlap},
                                    {"buckets", info.buckets},
                                    {"epochs", epochs},
                                    {"step_loss", stepLoss},
                                    {"param_hash", info.paramHash}};
  // Written aside and renamed, so a reader never sees half a file.
  const std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (!f) return chorus::Status::FromErrno(errno, "cannot write metrics file " + tmp);
  fprintf(f, "%s\n", j.dump(2).c_str());
  const bool ok = fflush(f) == 0 && !ferror(f);
  fclose(f);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0)
    return chorus::Status::FromErrno(errno, "cannot write metrics file " + path);
  return chorus::Status::Ok();
}

chorus::Status writePlot(const std::string& path, const std::string& title,
                         const std::vector<EpochRecord>& history,
                         const std::vector<float>& stepLoss, int64_t stepsPerEpoch) {
  char dataPath[] = "/tmp/chorus-train-plot-XXXXXX";
  int fd = mkstemp(dataPath);
  if (fd < 0) return chorus::Status::FromErrno(errno, "cannot create a temporary plot file");
  FILE* d = fdopen(fd, "w");
  for (size_t i = 0; i < stepLoss.size(); ++i)
    fprintf(d, "%.6f %.6g\n", double(i + 1) / double(stepsPerEpoch), double(stepLoss[i]));
  fprintf(d, "\n\n");
  for (const EpochRecord& r : history) fprintf(d, "%d %.6g\n", r.epoch, 100 * r.testAccuracy);
  fclose(d);
  FILE* g = popen("gnuplot 2>&1", "w");
  if (!g) {
    unlink(dataPath);
    return chorus::Status::FromErrno(errno, "cannot run gnuplot (install gnuplot-nox)");
  }
  fprintf(g,
          "set terminal pngcairo size 1000,420\nset output '%s'\n"
          "set multiplot layout 1,2 title '%s'\n"
          "set grid\nset xlabel 'epoch'\nset ylabel 'training loss'\n"
          "plot '%s' index 0 with lines lw 1 title 'loss per step'\n"
          "set ylabel 'test accuracy (%%)'\nset xtics 1\n"
          "plot '%s' index 1 with linespoints lw 2 pt 7 title 'test accuracy'\n"
          "unset multiplot\n",
          path.c_str(), title.c_str(), dataPath, dataPath);
  const int rc = pclose(g);
  unlink(dataPath);
  if (rc != 0) return chorus::Status::SystemError("gnuplot failed drawing " + path);
  return chorus::Status::Ok();
}

chorus::Status writeRunFiles(const std::string& metricsPath, const std::string& plotPath, int rank,
                             const RunInfo& info, const std::vector<EpochRecord>& history,
                             const std::vector<float>& stepLoss, int64_t stepsPerEpoch) {
  if (!metricsPath.empty()) {
    std::string path = metricsPath;
    const size_t at = path.find("%r");
    if (at != std::string::npos) path.replace(at, 2, std::to_string(rank));
    if (at != std::string::npos || rank == 0)
      CHORUS_RETURN_IF_ERROR(writeMetricsJson(path, info, history, stepLoss));
  }
  if (rank != 0 || plotPath.empty()) return chorus::Status::Ok();
  const std::string title =
      "chorus-train --strategy " + info.strategy + ", " + std::to_string(info.ranks) + " rank(s)";
  chorus::Status st = writePlot(plotPath, title, history, stepLoss, stepsPerEpoch);
  if (!st.ok()) fprintf(stderr, "chorus-train: plot not drawn: %s\n", st.toString().c_str());
  return chorus::Status::Ok();
}

double samplesPerSecond(const std::vector<EpochRecord>& history) {
  double wall = 0, seen = 0;
  for (const EpochRecord& r : history) {
    wall += r.wallS;
    seen += r.samplesPerS * r.wallS;
  }
  return wall > 0 ? seen / wall : 0;
}

}  // namespace train
