#include "options.h"

#include <cstdint>

#include "tools/cli/tool.h"

namespace train {

namespace cli = chorus::cli;

namespace {

constexpr int64_t kMaxInt = INT32_MAX;

// "512,256": widths of 1..65536.
void parseHidden(const std::string& opt, const std::string& text, std::vector<int>* out) {
  std::vector<int> widths;
  for (size_t s = 0; s <= text.size();) {
    size_t c = text.find(',', s);
    if (c == std::string::npos) c = text.size();
    try {
      widths.push_back(int(cli::parseInteger(opt, text.substr(s, c - s), 1, 65536)));
    } catch (const cli::BadValue&) {
      throw cli::BadValue(opt, text, "wants widths of 1..65536 separated by commas, e.g. 512,256");
    }
    s = c + 1;
  }
  *out = widths;
}

}  // namespace

int parseOptions(int argc, char** argv, Options* o) {
  cli::Tool tool("chorus-train",
                 "[options]   (launch: chorus-run -n 4 -- chorus-train, mpirun, srun)",
                 "The reference trainer: a 784-512-256-10 MLP on Fashion-MNIST, SGD with "
                 "momentum, its gradients allreduced by Chorus while backward runs, or the model "
                 "spread over the ranks by another strategy (docs/trainer.md).");
  CLI::App& app = tool.app();
  cli::integer(app, "--epochs", &o->epochs, 1, kMaxInt,
               "epochs in all, counting resumed ones (the learning-rate schedule spans them)");
  cli::integer(app, "--batch", &o->batch, 1, kMaxInt, "global batch, split across the ranks");
  cli::real(app, "--lr", &o->lr, 0, 1e9, "SGD learning rate");
  cli::real(app, "--momentum", &o->momentum, 0, 1e9, "SGD momentum");
  cli::choice(
      app, "--lr-schedule", &o->lrSchedule, {"cosine", "constant"},
      "cosine: the rate decays from --lr to 0 over the --epochs; constant: --lr throughout");
  cli::integer(app, "--seed", &o->seed, 0, INT64_MAX, "initialisation and shuffling seed");
  cli::checked(
      app, "--hidden",
      [o](const std::string& opt, const std::string& v) { parseHidden(opt, v, &o->hidden); },
      "A,B,...", "512,256", "hidden layer widths");
  cli::integer(app, "--train-limit", &o->trainLimit, 0, INT64_MAX,
               "use only the first N training images")
      ->default_str("all");
  cli::integer(app, "--test-limit", &o->testLimit, 0, INT64_MAX, "use only the first N test images")
      ->default_str("all");
  cli::integer(app, "--max-steps", &o->maxSteps, 0, INT64_MAX,
               "stop after N optimiser steps in all (0: no limit)");
  cli::choice(app, "--strategy", &o->strategy, {"ddp", "zero", "tensor", "pipeline", "hybrid"},
              "ddp (replicas), zero (sharded optimiser), tensor, pipeline, hybrid (data x tensor "
              "or data x pipeline grid)");
  cli::integer(app, "--micro-batches", &o->microBatches, 1, kMaxInt,
               "pipeline: micro-batches per batch, 1F1B schedule")
      ->default_str("2 x stages");
  cli::integer(app, "--data-parallel", &o->dataParallel, 1, kMaxInt,
               "hybrid: ranks along the data dimension of the grid");
  cli::choice(app, "--hybrid", &o->hybrid, {"tensor", "pipeline"},
              "hybrid: what runs along the model dimension");
  cli::real(app, "--bucket-mb", &o->bucketMb, 1e-4, 1e9,
            "gradient bucket size in MiB (with overlap; without, one bucket unless sharded)");
  app.add_flag_callback(
      "--no-overlap", [o] { o->overlap = false; },
      "allreduce the gradients after backward instead of during it (the default where a "
      "rank has no second CPU for its communication)");
  app.add_flag_callback(
      "--overlap", [o] { o->overlap = true; },
      "allreduce each bucket as soon as backward fills it (the default where each rank has "
      "2 CPUs or more)");
  app.add_flag("--shard-optimizer", o->shardOptimizer,
               "ddp: reduce-scatter buckets, step this rank's 1/P of the optimiser, allgather the "
               "parameters (ZeRO stage 1)");
  cli::integer(app, "--check-every", &o->checkEvery, 0, kMaxInt,
               "compare a parameter hash across ranks every N steps (0: off)");
  cli::integer(app, "--blas-threads", &o->blasThreads, 1, kMaxInt, "OpenBLAS threads per rank");
  cli::text(app, "--checkpoint", &o->checkpoint, "PATH",
            "write a checkpoint after every epoch (atomically)");
  cli::text(app, "--resume", &o->resume, "PATH", "continue from a checkpoint");
  cli::text(app, "--metrics", &o->metrics, "PATH",
            "per-epoch metrics as JSON (docs/json.md; '%r' in PATH: one file per rank)");
  cli::text(app, "--plot", &o->plot, "PATH", "loss and accuracy curves as a PNG (needs gnuplot)");
  cli::text(app, "--data", &o->data, "DIR", "Fashion-MNIST IDX files");
  // A test hook (tests/train_test.cc), not for users: kept out of --help.
  cli::integer(app, "--debug-perturb-rank", &o->debugPerturbRank, 0, kMaxInt, "")->group("");
  const int rc = tool.parse(argc, argv);
  o->quiet = tool.quiet();
  return rc;
}

}  // namespace train
