// What a run reports: a progress bar per epoch, one line per epoch, and on request a JSON
// file and a PNG of the loss and accuracy curves (drawn by gnuplot).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chorus/status.h"

namespace train {

struct EpochRecord {
  int epoch = 0;  // 1-based
  double trainLoss = 0, testAccuracy = 0, samplesPerS = 0;
  double commS = 0;     // communication thread busy in gradient allreduces
  double computeS = 0;  // forward, backward, optimiser, batch gathering
  double waitS = 0;     // training thread blocked on buckets (communication not hidden)
  double wallS = 0;
};

struct RunInfo {
  std::string strategy = "ddp";
  int ranks = 1;
  int batch = 0;
  bool overlap = true;
  size_t buckets = 0;
  std::string paramHash;  // hex, identical on every rank holding the same parameters
  size_t paramBytes = 0, optimizerBytes = 0;  // held by the rank writing the file
  float lr = 0;                               // --lr, the schedule's starting rate
  std::string lrSchedule;                     // --lr-schedule
};

class Progress {
 public:
  // Draws in place on a terminal; elsewhere (a pipe, chorus-run) prints a line per 10%.
  Progress(bool enabled, const std::string& strategy, int epoch, int64_t steps);
  void update(int64_t step, double loss, double samplesPerS);
  void done();

 private:
  bool enabled_, tty_;
  std::string strategy_;
  int epoch_;
  int64_t steps_;
  int lastDecile_ = 0;
};

// EpochRecord as 8 doubles each, for checkpoints and broadcasts.
std::vector<double> packRecords(const std::vector<EpochRecord>& r);
std::vector<EpochRecord> unpackRecords(const std::vector<double>& d);

std::string formatEpoch(const EpochRecord& r, int epochs);
chorus::Status writeMetricsJson(const std::string& path, const RunInfo& info,
                                const std::vector<EpochRecord>& history,
                                const std::vector<float>& stepLoss);
chorus::Status writePlot(const std::string& path, const std::string& title,
                         const std::vector<EpochRecord>& history,
                         const std::vector<float>& stepLoss, int64_t stepsPerEpoch);
// The end of a run: the metrics file (from every rank where the path holds %r, the rank; else
// from rank 0), and rank 0's plot, titled after info's strategy and ranks (a plot that cannot be
// drawn is only warned about). Empty paths write nothing.
chorus::Status writeRunFiles(const std::string& metricsPath, const std::string& plotPath, int rank,
                             const RunInfo& info, const std::vector<EpochRecord>& history,
                             const std::vector<float>& stepLoss, int64_t stepsPerEpoch);
// Samples per second over all the epochs of `history`.
double samplesPerSecond(const std::vector<EpochRecord>& history);

}  // namespace train
