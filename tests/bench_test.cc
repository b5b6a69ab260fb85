// chorus-bench, run for real: tiny sweeps under chorus-run (and mpirun for --impl mpi), their
// CSV parsed here independently of the tool's own parser, checking the columns, #wrong == 0
// and that busbw / algbw is the nccl-tests factor of each collective. MPI and Gloo modes are
// skipped, with the reason, when this chorus-bench was built without them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/bin_dir.h"

namespace {

using chorus::test::binDir;
std::string bench() {
  return binDir() + "/chorus-bench";
}
std::string chorusRun() {
  return binDir() + "/chorus-run";
}

struct Result {
  int code = -1;
  std::string out;
};

// Runs a shell command (stderr kept apart), with a time limit so a hang fails the test.
Result run(const std::string& cmd) {
  Result r;
  FILE* p = popen(("timeout 120 " + cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

Result underChorusRun(int ranks, const std::string& args) {
  return run(chorusRun() + " -n " + std::to_string(ranks) + " --no-tag-output -- " + bench() + " " +
             args);
}

bool built(const std::string& impl) {
  Result r = run(bench() + " impls");
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);)
    if (line == impl) return true;
  return false;
}

bool haveProgram(const std::string& name) {
  return run("sh -c 'command -v " + name + "'").code == 0;
}

using Row = std::map<std::string, std::string>;

std::vector<Row> parseCsv(const std::string& text) {
  std::vector<Row> rows;
  std::vector<std::string> header;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    if (line.rfind("impl,", 0) == 0) {
      header = cells;
      continue;
    }
    if (header.empty() || cells.size() != header.size()) continue;
    Row r;
    for (size_t i = 0; i < cells.size(); ++i) r[header[i]] = cells[i];
    rows.push_back(r);
  }
  return rows;
}

double num(const Row& r, const std::string& k) {
  return atof(r.at(k).c_str());
}

// The whole contract of a collective sweep: rows for the sizes asked, nothing wrong, and the
// bus-bandwidth factor of the collective at this rank count.
void checkSweep(const Result& r, const std::string& impl, const std::string& coll, int ranks,
                double factor, bool inPlace) {
  ASSERT_EQ(r.code, 0) << r.out;
  auto rows = parseCsv(r.out);
  ASSERT_GE(rows.size(), 2u) << r.out;
  for (const Row& row : rows) {
    EXPECT_EQ(row.at("impl"), impl);
    EXPECT_EQ(row.at("coll"), coll);
    EXPECT_EQ(num(row, "ranks"), ranks);
    EXPECT_EQ(num(row, "oop_wrong"), 0) << coll << " " << row.at("bytes");
    EXPECT_GT(num(row, "oop_us"), 0);
    EXPECT_LE(num(row, "oop_min_us"), num(row, "oop_us"));
    EXPECT_GE(num(row, "oop_max_us"), num(row, "oop_us"));
    if (num(row, "oop_algbw") > 0) {
      EXPECT_NEAR(num(row, "oop_busbw") / num(row, "oop_algbw"), factor, 1e-3);
    }
    EXPECT_EQ(!row.at("ip_us").empty(), inPlace) << coll;
    if (inPlace) {
      EXPECT_EQ(num(row, "ip_wrong"), 0) << coll << " in place";
    }
  }
}

const char* kTiny = " -b 8 -e 4K -f 8 -n 3 -w 1 --csv";

struct Case {
  const char* coll;
  double factor3;  // busbw / algbw at 3 ranks
  bool inPlace;
};
const Case kCases[] = {{"allreduce", 4.0 / 3, true}, {"reduce_scatter", 2.0 / 3, true},
                       {"allgather", 2.0 / 3, true}, {"broadcast", 1, true},
                       {"reduce", 1, true},          {"alltoall", 2.0 / 3, false},
                       {"gather", 2.0 / 3, false},   {"scatter", 2.0 / 3, false},
                       {"sendrecv", 1, false}};

TEST(BenchTest, EveryCollectiveChecksAndUsesTheBusBandwidthFactor) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.coll);
    checkSweep(underChorusRun(3, std::string(c.coll) + kTiny + " -r 1"), "chorus", c.coll, 3,
               c.factor3, c.inPlace);
  }
}

TEST(BenchTest, LowPrecisionTypesAndOpsCheckClean) {
  for (const char* args : {"allreduce -d bfloat16 -o max", "allreduce -d float16 -o avg",
                           "reduce_scatter -d int8 -o prod", "allreduce -d float64 -o min"}) {
    SCOPED_TRACE(args);
    checkSweep(underChorusRun(2, std::string(args) + kTiny), "chorus",
               std::string(args).substr(0, std::string(args).find(' ')), 2,
               std::string(args).rfind("allreduce", 0) == 0 ? 1.0 : 0.5, true);
  }
}

TEST(BenchTest, TableHasTheNcclTestsColumns) {
  Result r = underChorusRun(2, "allreduce -b 8 -e 64 -n 3 -w 1");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* col : {"out-of-place", "in-place", "size", "count", "type", "redop", "root",
                          "time", "min", "max", "algbw", "busbw", "#wrong", "(us)", "(GB/s)",
                          "# Avg bus bandwidth", "# Wrong elements       : 0 OK"})
    EXPECT_NE(r.out.find(col), std::string::npos) << col << "\n" << r.out;
}

// Each choice of --placement runs (a dangling reference once crashed every one of them).
TEST(BenchTest, PlacementChoosesTheColumnsMeasured) {
  for (const char* p : {"oop", "ip", "both"}) {
    SCOPED_TRACE(p);
    Result r =
        underChorusRun(2, std::string("allreduce -b 64 -e 64 -n 3 -w 1 --csv --placement ") + p);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("chorus,allreduce,2,64,"), std::string::npos) << r.out;
  }
}

TEST(BenchTest, JsonIsAnArrayOfRows) {
  Result r = underChorusRun(2, "allgather -b 64 -e 128 -n 3 -w 1 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  ASSERT_FALSE(r.out.empty());
  const nlohmann::json rows = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << r.out;
  ASSERT_EQ(rows.size(), 2u) << r.out;  // 64 and 128 bytes
  for (const auto& row : rows) {
    EXPECT_EQ(row.value("coll", ""), "allgather") << row;
    EXPECT_TRUE(row["in_place"].is_object()) << row;
    EXPECT_GT(row["out_of_place"].value("busbw_gbs", 0.0), 0) << row;
  }
}

TEST(BenchTest, PointToPointPrintsOsuColumns) {
  Result lat = underChorusRun(2, "latency -m 1:64 -i 5 -x 1 -c -f");
  ASSERT_EQ(lat.code, 0) << lat.out;
  EXPECT_NE(lat.out.find("# Size"), std::string::npos) << lat.out;
  EXPECT_NE(lat.out.find("Latency (us)"), std::string::npos) << lat.out;
  EXPECT_NE(lat.out.find("Iterations"), std::string::npos) << lat.out;
  EXPECT_EQ(lat.out.find("wrong"), std::string::npos) << lat.out;
  for (const char* t : {"bw", "bibw"}) {
    Result r = underChorusRun(3, std::string(t) + " -m 1K:4K -i 3 -x 1 -W 8 -c --csv");
    ASSERT_EQ(r.code, 0) << r.out;
    auto rows = parseCsv(r.out);
    ASSERT_EQ(rows.size(), 3u) << r.out;
    for (const Row& row : rows) {
      EXPECT_EQ(num(row, "wrong"), 0);
      EXPECT_GT(num(row, "mbps"), 0);
    }
  }
}

TEST(BenchTest, BadUsageExitsTwoWithAMessage) {
  EXPECT_EQ(run(bench() + " allreduce -d nosuchtype").code, 2);
  EXPECT_EQ(run(bench() + " nosuchcommand").code, 2);
  EXPECT_EQ(run(bench() + " allreduce -b 1M -e 1K").code, 2);
  EXPECT_EQ(run(bench() + " --help").code, 0);
}

TEST(BenchTest, MpiBackendUnderMpirun) {
  if (!built("mpi")) GTEST_SKIP() << "chorus-bench was built without Open MPI (libopenmpi-dev)";
  if (!haveProgram("mpirun")) GTEST_SKIP() << "mpirun is not installed (openmpi-bin)";
  std::string mpirun = "mpirun -n 3 --oversubscribe --mca btl self,vader";
  if (geteuid() == 0) mpirun += " --allow-run-as-root";
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.coll);
    checkSweep(run(mpirun + " " + bench() + " " + c.coll + kTiny + " -r 1 --impl mpi"), "mpi",
               c.coll, 3, c.factor3, c.inPlace);
  }
}

TEST(BenchTest, GlooBackendUnderChorusRun) {
  if (!built("gloo")) GTEST_SKIP() << "chorus-bench was built without Gloo (libgloo-dev)";
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.coll);
    checkSweep(underChorusRun(3, std::string(c.coll) + kTiny + " -r 1 --impl gloo"), "gloo", c.coll,
               3, c.factor3, c.inPlace);
  }
  checkSweep(underChorusRun(2, std::string("allreduce") + kTiny + " --impl gloo --gloo-algo hd"),
             "gloo", "allreduce", 2, 1, true);
}

TEST(BenchTest, CompareRunsEveryBuiltImplementationAndPrintsRatios) {
  std::string impls = "chorus";
  if (built("mpi") && haveProgram("mpirun")) impls += ",mpi";
  if (built("gloo")) impls += ",gloo";
  Result r =
      run(bench() + " compare -n 2 --impls " + impls + " allreduce -b 8 -e 512 -f 8 -n 3 -w 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("chorus(us)"), std::string::npos) << r.out;
  if (impls.find("mpi") != std::string::npos) {
    EXPECT_NE(r.out.find("vs mpi"), std::string::npos) << r.out;
  }
  if (impls.find("gloo") != std::string::npos) {
    EXPECT_NE(r.out.find("vs gloo"), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("\n           8 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n         512 "), std::string::npos) << r.out;
}

TEST(BenchTest, PlotWritesAPicture) {
  if (!haveProgram("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (gnuplot-nox)";
  char dir[] = "/tmp/chorus-bench-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string svg = std::string(dir) + "/allreduce.svg";
  Result r = underChorusRun(2, "allreduce -b 8 -e 1K -f 8 -n 3 -w 1 --plot " + svg);
  EXPECT_EQ(r.code, 0) << r.out;
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  unlink(svg.c_str());
  rmdir(dir);
}

}  // namespace
