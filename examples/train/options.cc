#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <type_traits>

namespace train {
namespace {

const char kUsage[] =
    "usage: chorus-train [options]   (launch: chorus-run -n 4 -- chorus-train, mpirun, srun)\n"
    "  --epochs N         epochs in all, counting resumed ones (3)\n"
    "  --batch B          global batch, split across the ranks (128)\n"
    "  --lr X             SGD learning rate (0.05)\n"
    "  --momentum X       SGD momentum (0.9)\n"
    "  --seed S           initialisation and shuffling seed (1)\n"
    "  --hidden A,B,...   hidden layer widths (512,256)\n"
    "  --train-limit N    use only the first N training images (all)\n"
    "  --test-limit N     use only the first N test images (all)\n"
    "  --max-steps N      stop after N optimiser steps (no limit)\n"
    "  --strategy S       ddp (replicas), zero (sharded optimiser), tensor, pipeline,\n"
    "                     hybrid (data x tensor or data x pipeline grid) (ddp)\n"
    "  --micro-batches M  pipeline: micro-batches per batch, 1F1B schedule (2 x stages)\n"
    "  --data-parallel D  hybrid: ranks along the data dimension of the grid (2)\n"
    "  --hybrid KIND      hybrid: tensor or pipeline along the model dimension (tensor)\n"
    "  --bucket-mb X      gradient bucket size in MiB (0.25)\n"
    "  --no-overlap       allreduce all buckets after backward instead of during it\n"
    "  --shard-optimizer  ddp: reduce-scatter buckets, step this rank's 1/P of the\n"
    "                     optimiser, allgather the parameters (ZeRO stage 1)\n"
    "  --check-every N    compare a parameter hash across ranks every N steps (100; 0: off)\n"
    "  --blas-threads N   OpenBLAS threads per rank (1)\n"
    "  --checkpoint PATH  write a checkpoint after every epoch (atomically)\n"
    "  --resume PATH      continue from a checkpoint\n"
    "  --metrics PATH     per-epoch metrics as JSON ('%r' in PATH: one file per rank)\n"
    "  --plot PATH        loss and accuracy curves as a PNG (needs gnuplot)\n"
    "  --data DIR         Fashion-MNIST IDX files (/usr/share/datasets/fashion-mnist)\n"
    "  --quiet            no progress bar\n";

bool parseInt(const char* s, int64_t lo, int64_t* out) {
  char* end = nullptr;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || v < lo) return false;
  *out = v;
  return true;
}

bool parseFloat(const char* s, double* out) {
  char* end = nullptr;
  double v = strtod(s, &end);
  if (end == s || *end) return false;
  *out = v;
  return true;
}

bool parseList(const char* s, std::vector<int>* out) {
  out->clear();
  for (const char* p = s; *p;) {
    char* end = nullptr;
    long v = strtol(p, &end, 10);
    if (end == p || v <= 0 || v > 65536) return false;
    out->push_back(int(v));
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return false;
  }
  return !out->empty();
}

}  // namespace

bool parseOptions(int argc, char** argv, Options* o, bool* exitNow) {
  *exitNow = false;
  using Setter = std::function<bool(const char*)>;
  auto integer = [](int64_t lo, auto* field) {
    return Setter([lo, field](const char* s) {
      int64_t v;
      if (!parseInt(s, lo, &v)) return false;
      *field = static_cast<std::remove_reference_t<decltype(*field)>>(v);
      return true;
    });
  };
  auto real = [](double lo, auto* field) {
    return Setter([lo, field](const char* s) {
      double v;
      if (!parseFloat(s, &v) || v < lo) return false;
      *field = static_cast<std::remove_reference_t<decltype(*field)>>(v);
      return true;
    });
  };
  auto text = [](std::string* field) {
    return Setter([field](const char* s) { return *(field) = s, true; });
  };
  auto oneOf = [](std::vector<std::string> names, std::string* field) {
    return Setter([names, field](const char* s) {
      for (const std::string& n : names)
        if (n == s) return *(field) = s, true;
      return false;
    });
  };
  const std::map<std::string, Setter> withValue = {
      {"--epochs", integer(1, &o->epochs)},
      {"--batch", integer(1, &o->batch)},
      {"--lr", real(0, &o->lr)},
      {"--momentum", real(0, &o->momentum)},
      {"--seed", integer(0, &o->seed)},
      {"--hidden", [o](const char* s) { return parseList(s, &o->hidden); }},
      {"--train-limit", integer(0, &o->trainLimit)},
      {"--test-limit", integer(0, &o->testLimit)},
      {"--max-steps", integer(0, &o->maxSteps)},
      {"--bucket-mb", real(1e-4, &o->bucketMb)},
      {"--check-every", integer(0, &o->checkEvery)},
      {"--blas-threads", integer(1, &o->blasThreads)},
      {"--checkpoint", text(&o->checkpoint)},
      {"--resume", text(&o->resume)},
      {"--metrics", text(&o->metrics)},
      {"--plot", text(&o->plot)},
      {"--data", text(&o->data)},
      {"--strategy", oneOf({"ddp", "zero", "tensor", "pipeline", "hybrid"}, &o->strategy)},
      {"--micro-batches", integer(1, &o->microBatches)},
      {"--data-parallel", integer(1, &o->dataParallel)},
      {"--hybrid", oneOf({"tensor", "pipeline"}, &o->hybrid)},
      {"--debug-perturb-rank", integer(0, &o->debugPerturbRank)},
  };
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    std::string value;
    bool inlineValue = false;
    if (size_t eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      inlineValue = true;
    }
    if (name == "-h" || name == "--help") {
      fputs(kUsage, stdout);
      *exitNow = true;
      return true;
    }
    if (name == "--no-overlap" || name == "--overlap" || name == "--quiet" ||
        name == "--shard-optimizer") {
      if (name == "--quiet")
        o->quiet = true;
      else if (name == "--shard-optimizer")
        o->shardOptimizer = true;
      else
        o->overlap = name == "--overlap";
      continue;
    }
    auto it = withValue.find(name);
    if (it == withValue.end()) {
      fprintf(stderr, "chorus-train: unknown option '%s'\n%s", argv[i], kUsage);
      return false;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        fprintf(stderr, "chorus-train: %s needs a value\n%s", name.c_str(), kUsage);
        return false;
      }
      value = argv[++i];
    }
    if (!it->second(value.c_str())) {
      fprintf(stderr, "chorus-train: bad value '%s' for %s\n%s", value.c_str(), name.c_str(),
              kUsage);
      return false;
    }
  }
  return true;
}

}  // namespace train
