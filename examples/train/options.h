// Command line of chorus-train. Every option has a default that trains the demo job
// (784-512-256-10 MLP on Fashion-MNIST, 3 epochs, global batch 128, SGD lr 0.05 momentum 0.9,
// the rate decaying along a cosine over the run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace train {

struct Options {
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::vector<int> hidden = {512, 256};
  int epochs = 3;
  int batch = 128;  // global: the ranks split every batch between them
  float lr = 0.05f;
  float momentum = 0.9f;
  std::string lrSchedule = "cosine";  // or "constant" (sgd.h)
  uint64_t seed = 1;
  int64_t trainLimit = 0;  // 0: every training image
  int64_t testLimit = 0;   // 0: every test image
  int64_t maxSteps = 0;    // 0: no limit; stops the run after this many steps in all
  double bucketMb = 0.25;
  std::optional<bool> overlap;  // unset: decided from the ranks and CPUs (overlap_policy.h)
  bool shardOptimizer = false;  // ddp: reduce-scatter, step 1/P of the optimiser, allgather
  int checkEvery = 100;         // steps between parameter-hash comparisons; 0 turns the check off
  int blasThreads = 1;
  bool quiet = false;  // -q: no progress bar
  std::string checkpoint, resume, metrics, plot;
  // How model and batch are spread over the ranks: ddp, zero, tensor, pipeline or hybrid.
  std::string strategy = "ddp";
  int microBatches = 0;           // pipeline: micro-batches per batch (0: twice the stages)
  int dataParallel = 2;           // hybrid: width of the data dimension of the grid
  std::string hybrid = "tensor";  // hybrid: the model dimension, tensor or pipeline
  int debugPerturbRank = -1;      // test hook: this rank nudges one parameter after step 1
};

// Parses argv (on the tools' option layer, src/tools/cli): -1 when training should go on,
// otherwise the exit status once the help, the version or the usage error is printed.
int parseOptions(int argc, char** argv, Options* o);

}  // namespace train
