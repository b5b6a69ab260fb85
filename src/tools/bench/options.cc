#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace chorus::bench {

namespace {

const std::set<std::string> kCollectives = {"allreduce", "reduce_scatter", "allgather",
                                            "broadcast", "reduce",         "alltoall",
                                            "gather",    "scatter",        "sendrecv"};
const std::set<std::string> kPointToPoint = {"latency", "bw", "bibw"};

struct Parser {
  int argc;
  char** argv;
  int i = 2;
  std::string error;

  bool more() const { return i < argc; }
  std::string arg() const { return argv[i]; }
  // The value of the option at argv[i]: "--opt=v", or the next argument.
  bool value(std::string* out) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      *out = a.substr(eq + 1);
      return true;
    }
    if (i + 1 >= argc) {
      error = a + " needs a value";
      return false;
    }
    *out = argv[++i];
    return true;
  }
};

bool toInt(const std::string& s, int lo, int* out) {
  char* end = nullptr;
  long v = strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < lo || v > 1 << 30) return false;
  *out = int(v);
  return true;
}

std::string optName(const std::string& a) {
  return a.substr(0, a.find('='));
}

// Options every command takes. Returns 1 handled, 0 not ours, -1 error.
int commonOption(Parser& p, Options* o) {
  const std::string a = optName(p.arg());
  std::string v;
  if (a == "--impl") {
    if (!p.value(&o->impl)) return -1;
    if (o->impl != "chorus" && o->impl != "mpi" && o->impl != "gloo") {
      p.error = "--impl is chorus, mpi or gloo, not '" + o->impl + "'";
      return -1;
    }
  } else if (a == "--csv") {
    o->format = Format::Csv;
  } else if (a == "--json") {
    o->format = Format::Json;
  } else if (a == "--plot") {
    if (!p.value(&o->plot)) return -1;
  } else if (a == "--progress") {
    o->progress = 1;
  } else if (a == "--no-progress") {
    o->progress = 0;
  } else if (a == "--gloo-store") {
    if (!p.value(&o->glooStore)) return -1;
  } else if (a == "--gloo-host") {
    if (!p.value(&o->glooHost)) return -1;
  } else if (a == "--gloo-algo") {
    if (!p.value(&o->glooAlgo)) return -1;
    if (o->glooAlgo != "ring" && o->glooAlgo != "bcube" && o->glooAlgo != "hd") {
      p.error = "--gloo-algo is ring, bcube or hd, not '" + o->glooAlgo + "'";
      return -1;
    }
  } else if (a == "--budget" || a == "-t") {
    if (!p.value(&v)) return -1;
    o->budgetSec = atof(v.c_str());
    if (!(o->budgetSec > 0)) {
      p.error = a + " wants seconds > 0";
      return -1;
    }
  } else {
    return 0;
  }
  return 1;
}

// nccl-tests: -b -e -f -n -w -d -o -r -c, plus --placement.
int collectiveOption(Parser& p, Options* o) {
  const std::string a = optName(p.arg());
  std::string v;
  auto size = [&](size_t* out) {
    if (!p.value(&v)) return -1;
    if (!parseSize(v, out)) {
      p.error = a + ": '" + v + "' is not a size (8, 64K, 1M, 1G)";
      return -1;
    }
    return 1;
  };
  auto integer = [&](int lo, int* out) {
    if (!p.value(&v)) return -1;
    if (!toInt(v, lo, out)) {
      p.error = a + ": '" + v + "' is not an integer >= " + std::to_string(lo);
      return -1;
    }
    return 1;
  };
  if (a == "-b") return size(&o->minBytes);
  if (a == "-e") return size(&o->maxBytes);
  if (a == "-n" || a == "--iters") return integer(1, &o->iters);
  if (a == "-w" || a == "--warmup") return integer(0, &o->warmup);
  if (a == "-r" || a == "--root") return integer(0, &o->root);
  if (a == "-c" || a == "--check") {
    int c = 1;
    if (integer(0, &c) < 0) return -1;
    o->check = c != 0;
    return 1;
  }
  if (a == "-f") {
    if (!p.value(&v)) return -1;
    o->factor = atof(v.c_str());
    if (!(o->factor > 1)) {
      p.error = "-f wants a factor > 1";
      return -1;
    }
    return 1;
  }
  if (a == "-d" || a == "--dtype") {
    if (!p.value(&v)) return -1;
    if (!parseDataType(v.c_str(), &o->dtype)) {
      p.error = "-d: unknown type '" + v + "' (float32, float16, bfloat16, int32, ...)";
      return -1;
    }
    return 1;
  }
  if (a == "-o" || a == "--op") {
    if (!p.value(&v)) return -1;
    if (!parseRedOp(v.c_str(), &o->op)) {
      p.error = "-o: unknown op '" + v + "' (sum, prod, max, min, avg)";
      return -1;
    }
    return 1;
  }
  if (a == "--placement") {
    if (!p.value(&v)) return -1;
    if (v == "oop")
      o->placement = Placement::OutOfPlace;
    else if (v == "ip")
      o->placement = Placement::InPlace;
    else if (v == "both")
      o->placement = Placement::Both;
    else {
      p.error = "--placement is oop, ip or both";
      return -1;
    }
    return 1;
  }
  return 0;
}

// OSU: -m [min:]max -i -x -W -c -f.
int p2pOption(Parser& p, Options* o) {
  const std::string a = optName(p.arg());
  std::string v;
  if (a == "-m") {
    if (!p.value(&v)) return -1;
    size_t colon = v.find(':');
    bool ok = colon == std::string::npos ? parseSize(v, &o->maxBytes)
                                         : parseSize(v.substr(0, colon), &o->minBytes) &&
                                               parseSize(v.substr(colon + 1), &o->maxBytes);
    if (!ok) {
      p.error = "-m wants [min:]max sizes, not '" + v + "'";
      return -1;
    }
    return 1;
  }
  int* target = a == "-i" ? &o->iters : a == "-x" ? &o->warmup : a == "-W" ? &o->window : nullptr;
  if (target) {
    if (!p.value(&v)) return -1;
    if (!toInt(v, a == "-x" ? 0 : 1, target)) {
      p.error = a + ": '" + v + "' is not a valid count";
      return -1;
    }
    return 1;
  }
  if (a == "-c") {
    o->check = true;
    return 1;
  }
  if (a == "-f") {
    o->full = true;
    return 1;
  }
  return 0;
}

// compare [-n N] [--impls a,b] [--mpirun-args "..."] [--plot F] COLL [run options...]
bool parseCompare(Parser& p, Options* o) {
  std::string v;
  while (p.more()) {
    const std::string a = optName(p.arg());
    if (a == "-n" || a == "--np") {
      if (!p.value(&v) || !toInt(v, 1, &o->ranks)) {
        if (p.error.empty()) p.error = "-n wants a rank count >= 1";
        return false;
      }
    } else if (a == "--impls") {
      if (!p.value(&v)) return false;
      o->impls.clear();
      for (size_t s = 0; s <= v.size();) {
        size_t c = v.find(',', s);
        if (c == std::string::npos) c = v.size();
        if (c > s) o->impls.push_back(v.substr(s, c - s));
        s = c + 1;
      }
    } else if (a == "--mpirun-args") {
      if (!p.value(&o->mpirunArgs)) return false;
    } else if (a == "--plot") {
      if (!p.value(&o->plot)) return false;
    } else if (!a.empty() && a[0] != '-') {
      o->passThrough.push_back(p.arg());  // the collective name
      for (++p.i; p.more(); ++p.i) o->passThrough.push_back(p.arg());
      break;
    } else {
      p.error = "compare: unknown option '" + a + "' (compare options go before the collective)";
      return false;
    }
    ++p.i;
  }
  if (o->passThrough.empty() || !isCollective(o->passThrough[0])) {
    p.error = "compare wants a collective: compare -n 2 allreduce [options]";
    return false;
  }
  return true;
}

}  // namespace

bool isCollective(const std::string& n) {
  return kCollectives.count(n) > 0;
}
bool isPointToPoint(const std::string& n) {
  return kPointToPoint.count(n) > 0;
}

void printUsage(FILE* out) {
  fprintf(
      out,
      "usage: chorus-bench COMMAND [options]      (run under chorus-run, mpirun or srun)\n"
      "\n"
      "collectives (nccl-tests style): allreduce reduce_scatter allgather broadcast reduce\n"
      "                                alltoall gather scatter sendrecv\n"
      "  -b MIN -e MAX -f FACTOR   size sweep in bytes (8, 64K, 1M; default 8 .. 64M, x2)\n"
      "  -n ITERS -w WARMUP        timed and warm-up iterations (default: fill -t seconds)\n"
      "  -d TYPE -o OP -r ROOT     float32 sum 0; types float16 bfloat16 float64 int32 ...\n"
      "  -c 0|1                    check results (#wrong), default 1\n"
      "  --placement oop|ip|both   out-of-place, in-place or both (default)\n"
      "point-to-point (OSU style, ranks 0 and 1): latency bw bibw\n"
      "  -m [MIN:]MAX -i ITERS -x WARMUP -W WINDOW (64) -c (validate) -f (full statistics)\n"
      "side by side: compare [-n RANKS] [--impls chorus,mpi,gloo] [--mpirun-args ARGS]\n"
      "                      [--plot F] COLLECTIVE [options]\n"
      "  starts chorus-run and mpirun itself and prints Chorus/MPI and Chorus/Gloo ratios\n"
      "impls: lists the implementations built into this binary\n"
      "\n"
      "common: --impl chorus|mpi|gloo  --csv | --json  --plot out.svg|out.png\n"
      "        -t SECONDS (time budget per size, default 0.2)  --progress | --no-progress\n"
      "        --gloo-store DIR (/tmp) --gloo-host ADDR (127.0.0.1) --gloo-algo ring|bcube|hd\n");
}

bool parseOptions(int argc, char** argv, Options* o, int* exitCode) {
  *exitCode = 2;
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    printUsage(argc < 2 ? stderr : stdout);
    if (argc >= 2) *exitCode = 0;
    return false;
  }
  Options defaults;
  *o = defaults;
  o->command = argv[1];
  Parser p{argc, argv, 2, {}};
  const bool coll = isCollective(o->command), p2p = isPointToPoint(o->command);
  if (o->command == "compare") {
    if (parseCompare(p, o)) return true;
  } else if (!coll && !p2p) {
    p.error = "unknown command '" + o->command + "'";
  } else {
    if (p2p) o->minBytes = 1, o->maxBytes = 4 << 20, o->check = false;
    for (; p.more() && p.error.empty(); ++p.i) {
      if (p.arg() == "-h" || p.arg() == "--help") {
        printUsage(stdout);
        *exitCode = 0;
        return false;
      }
      int r = commonOption(p, o);
      if (r == 0) r = coll ? collectiveOption(p, o) : p2pOption(p, o);
      if (r == 0) p.error = "unknown option '" + p.arg() + "' for " + o->command;
      if (r < 0) break;
    }
    if (p.error.empty() && (o->maxBytes < o->minBytes || (coll && o->minBytes == 0)))
      p.error = "the sweep needs 0 < min <= max";
    if (p.error.empty()) return true;
  }
  fprintf(stderr, "chorus-bench: %s (see chorus-bench --help)\n", p.error.c_str());
  return false;
}

}  // namespace chorus::bench
