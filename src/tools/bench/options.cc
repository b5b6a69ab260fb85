#include "options.h"

#include <algorithm>
#include <cstdint>

#include "tools/cli/tool.h"

namespace chorus::bench {

namespace {

const std::vector<std::string> kCollectives = {"allreduce", "reduce_scatter", "allgather",
                                               "broadcast", "reduce",         "alltoall",
                                               "gather",    "scatter",        "sendrecv"};
const std::vector<std::string> kPointToPoint = {"latency", "bw", "bibw"};
constexpr int64_t kMaxCount = 1 << 30;

// Long options every command takes; commands fall through to these.
void commonOptions(CLI::App& app, Options* o) {
  cli::choice(app, "--impl", &o->impl, {"chorus", "mpi", "gloo"}, "the library measured");
  app.add_flag_callback(
      "--csv", [o] { o->format = Format::Csv; }, "comma-separated values");
  app.add_flag_callback(
      "--json", [o] { o->format = Format::Json; }, "JSON, one object per line (docs/json.md)");
  cli::text(app, "--plot", &o->plot, "FILE", "draw busbw and time against size (.svg or .png)");
  app.add_flag_callback(
         "--progress", [o] { o->progress = 1; }, "a progress line on stderr")
      ->default_str("when stderr is a terminal");
  app.add_flag_callback(
      "--no-progress", [o] { o->progress = 0; }, "no progress line");
  cli::real(app, "-t,--budget", &o->budgetSec, 1e-6, 1e6,
            "seconds of timing per size when -n is not given")
      ->type_name("SECONDS");
  cli::text(app, "--gloo-store", &o->glooStore, "DIR", "where Gloo's file store lives");
  cli::text(app, "--gloo-host", &o->glooHost, "ADDR", "the address Gloo's TCP pairs bind");
  cli::choice(app, "--gloo-algo", &o->glooAlgo, {"ring", "bcube", "hd"},
              "Gloo's allreduce (hd: halving-doubling)");
}

// nccl-tests: -b -e -f -n -w -d -o -r -c, plus --placement.
void collectiveOptions(CLI::App& c, Options* o) {
  cli::size(c, "-b", &o->minBytes, "smallest size of the sweep");
  cli::size(c, "-e", &o->maxBytes, "largest size of the sweep");
  cli::real(c, "-f", &o->factor, 1.000001, 1e9, "size factor between rows");
  cli::integer(c, "-n,--iters", &o->iters, 1, kMaxCount, "timed iterations per size")
      ->default_str("fill -t seconds");
  cli::integer(c, "-w,--warmup", &o->warmup, 0, kMaxCount, "warm-up iterations per size");
  cli::checked(
      c, "-d,--dtype",
      [o](const std::string& opt, const std::string& v) {
        if (!parseDataType(v.c_str(), &o->dtype))
          throw cli::BadValue(opt, v, "wants float32, float16, bfloat16, float64, int32, ...");
      },
      "TYPE", "float32", "element type");
  cli::checked(
      c, "-o,--op",
      [o](const std::string& opt, const std::string& v) {
        if (!parseRedOp(v.c_str(), &o->op))
          throw cli::BadValue(opt, v, "wants sum, prod, max, min or avg");
      },
      "OP", "sum", "reduction");
  cli::integer(c, "-r,--root", &o->root, 0, kMaxCount, "root rank");
  cli::checked(
      c, "-c,--check",
      [o](const std::string& opt, const std::string& v) {
        o->check = cli::parseInteger(opt, v, 0, 1) != 0;
      },
      "0|1", "1", "check the results (#wrong)");
  cli::checked(
      c, "--placement",
      [o](const std::string& opt, const std::string& v) {
        const std::string p = cli::parseChoice(opt, v, {"oop", "ip", "both"});
        o->placement = p == "oop"  ? Placement::OutOfPlace
                       : p == "ip" ? Placement::InPlace
                                   : Placement::Both;
      },
      "oop|ip|both", "both", "out-of-place, in-place or both");
  cli::choice(c, "--alloc", &o->alloc, {"malloc", "shared"},
              "where the buffers come from: malloc, or chorus::allocateShared (what ncclMemAlloc "
              "returns), which Chorus's local ranks read from each other in place");
}

// OSU: -m [min:]max -i -x -W -c -f, and the smaller default sweep of OSU.
void pointToPointOptions(CLI::App& c, Options* o) {
  c.preparse_callback([o](size_t) { o->minBytes = 1, o->maxBytes = 4 << 20, o->check = false; });
  cli::checked(
      c, "-m",
      [o](const std::string& opt, const std::string& v) {
        uint64_t lo = o->minBytes, hi;
        if (v.find(':') == std::string::npos)
          hi = cli::parseSize(opt, v);
        else
          cli::parseSizeRange(opt, v, &lo, &hi);
        o->minBytes = lo, o->maxBytes = hi;
      },
      "[MIN:]MAX", "1:4M", "sizes of the sweep, doubling");
  cli::integer(c, "-i", &o->iters, 1, kMaxCount, "timed iterations per size")
      ->default_str("fill -t seconds");
  cli::integer(c, "-x", &o->warmup, 0, kMaxCount, "warm-up iterations per size");
  cli::integer(c, "-W", &o->window, 1, kMaxCount, "bw, bibw: messages in flight");
  c.add_flag("-c", o->check, "validate the received bytes");
  c.add_flag("-f", o->full, "full statistics (min, max, iterations)");
}

// compare [-n N] [--impls a,b] [--mpirun-args "..."] [--plot F] COLL [run options...]
void compareOptions(CLI::App& c, Options* o) {
  // The collective and every option after it are passed through to every run; nothing falls
  // through to the common options, which belong to the runs.
  c.prefix_command()->fallthrough(false);
  c.footer(
      "COLLECTIVE [options]: a collective and its options (chorus-bench allreduce --help), "
      "passed to every run.");
  cli::text(c, "--plot", &o->plot, "FILE", "draw every implementation's busbw (.svg or .png)");
  cli::integer(c, "-n,--np", &o->ranks, 1, 1024, "ranks of every run");
  cli::checked(
      c, "--impls",
      [o](const std::string&, const std::string& v) {
        o->impls.clear();
        for (size_t s = 0; s <= v.size();) {
          size_t comma = v.find(',', s);
          if (comma == std::string::npos) comma = v.size();
          if (comma > s) o->impls.push_back(v.substr(s, comma - s));
          s = comma + 1;
        }
      },
      "LIST", "every one built", "the implementations compared, e.g. chorus,mpi");
  cli::text(c, "--mpirun-args", &o->mpirunArgs, "ARGS", "extra arguments for mpirun");
}

}  // namespace

bool isCollective(const std::string& n) {
  return std::find(kCollectives.begin(), kCollectives.end(), n) != kCollectives.end();
}

int parseOptions(int argc, char** argv, Options* o) {
  cli::Tool tool("chorus-bench", "COMMAND [options]   (run under chorus-run, mpirun or srun)",
                 "Benchmark tables for Chorus, Open MPI and Gloo from one binary: collectives "
                 "in the style of nccl-tests, point-to-point in the style of OSU, and compare, "
                 "which starts the launchers itself and prints the ratios.");
  CLI::App& app = tool.app();
  app.require_subcommand(1);
  commonOptions(app, o);
  auto command = [&](const std::string& name, const std::string& help) {
    CLI::App* c = app.add_subcommand(name, help)->fallthrough()->group("Commands");
    c->footer("The options common to every command apply too (chorus-bench --help).");
    return c;
  };
  for (const std::string& c : kCollectives)
    collectiveOptions(*command(c, c + ", nccl-tests style"), o);
  for (const std::string& c : kPointToPoint)
    pointToPointOptions(*command(c, c + ", OSU style (ranks 0 and 1)"), o);
  compareOptions(*command("compare",
                          "runs COLLECTIVE under chorus-run and mpirun with every "
                          "implementation and prints their ratios"),
                 o);
  command("impls", "lists the implementations built into this binary, one per line");
  if (int rc = tool.parse(argc, argv); rc >= 0) return rc;
  CLI::App* chosen = app.get_subcommands().at(0);
  o->command = chosen->get_name();
  if (tool.quiet()) o->progress = 0;
  if (o->command == "compare") {
    o->passThrough = chosen->remaining();
    if (o->passThrough.empty() || !isCollective(o->passThrough[0]))
      return tool.usageError("compare wants a collective: compare -n 2 allreduce [options]");
  } else if (o->maxBytes < o->minBytes || o->minBytes == 0) {
    return tool.usageError("the sweep needs 0 < min <= max, not " + cli::sizeText(o->minBytes) +
                           " .. " + cli::sizeText(o->maxBytes));
  }
  return -1;
}

}  // namespace chorus::bench
