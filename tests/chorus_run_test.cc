// Runs the real chorus-run binary the way a user would, with small sh programs as the ranks, and
// checks what comes out: the environment each rank sees, tagged output, how failures, timeouts and
// signals stop the job, and the exit code. Every run has a deadline, so a hang fails the test.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  int code = -1;  // exit status, or 128 + signal
  std::string out, err;
  double seconds = 0;
};

// Called after each read; may signal chorus-run (pid) once the job reaches some state.
using Watcher = std::function<void(const Result&, pid_t)>;

std::string LauncherPath() {
  if (const char* dir = getenv("CHORUS_BIN_DIR")) return std::string(dir) + "/chorus-run";
  // Run by hand: the launcher is built next to this test.
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string path(self, n > 0 ? static_cast<size_t>(n) : 0);
  return path.substr(0, path.rfind('/') + 1) + "chorus-run";
}

// Reads whatever one pipe has; false once it is at end of file.
bool Drain(int fd, std::string& into) {
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  into.append(buf, static_cast<size_t>(n));
  return true;
}

Result Launch(const std::vector<std::string>& args, const Watcher& watch = {},
              double deadline_s = 9) {
  std::string path = LauncherPath();
  int out[2], err[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    std::vector<char*> argv = {path.data()};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(path.c_str(), argv.data());
    _exit(99);
  }
  close(out[1]);
  close(err[1]);
  Result r;
  bool open[2] = {true, true};
  auto deadline = start + std::chrono::duration<double>(deadline_s);
  while ((open[0] || open[1]) && Clock::now() < deadline) {
    pollfd fds[2] = {{open[0] ? out[0] : -1, POLLIN, 0}, {open[1] ? err[0] : -1, POLLIN, 0}};
    if (poll(fds, 2, 50) <= 0) continue;
    if (fds[0].revents) open[0] = Drain(out[0], r.out);
    if (fds[1].revents) open[1] = Drain(err[0], r.err);
    if (watch) watch(r, pid);
  }
  if (open[0] || open[1]) {
    ADD_FAILURE() << "chorus-run still running after " << deadline_s << " s; killing it";
    kill(pid, SIGKILL);
  }
  close(out[0]);
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

// Ranks run concurrently, so their lines come in any order; compare them sorted.
std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ChorusRun, SetsRankEnvironment) {
  Result r = Launch({"-n", "3", "--", "sh", "-c",
                     "echo $CHORUS_RANK $CHORUS_WORLD_SIZE $CHORUS_LOCAL_RANK $CHORUS_LOCAL_SIZE "
                     "$CHORUS_COMM_ID"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = SortedLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(lines[0], m, std::regex("127\\.0\\.0\\.1:([0-9]+)$"))) << lines[0];
  std::string port = m[1];
  EXPECT_GT(std::stoi(port), 0);
  for (int rank = 0; rank < 3; ++rank) {
    std::string k = std::to_string(rank);
    EXPECT_EQ(lines[rank], "[" + k + "] " + k + " 3 " + k + " 3 127.0.0.1:" + port);
  }
}

TEST(ChorusRun, PortOptionSetsCommId) {
  Result r = Launch({"-n", "1", "--port", "23456", "sh", "-c", "echo $CHORUS_COMM_ID"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[0] 127.0.0.1:23456\n");
}

TEST(ChorusRun, SecretIsHexAndSharedByTheJobOnly) {
  auto secrets = [] {
    Result r = Launch({"-n", "4", "--no-tag-output", "--", "sh", "-c", "echo $CHORUS_SECRET"});
    EXPECT_EQ(r.code, 0) << r.err;
    return SortedLines(r.out);
  };
  std::vector<std::string> first = secrets();
  ASSERT_EQ(first.size(), 4u);
  EXPECT_TRUE(std::regex_match(first[0], std::regex("[0-9a-f]{64}"))) << first[0];
  for (const std::string& s : first) EXPECT_EQ(s, first[0]);
  std::vector<std::string> second = secrets();
  ASSERT_EQ(second.size(), 4u);
  EXPECT_NE(second[0], first[0]) << "each job must get a fresh secret";
}

TEST(ChorusRun, TagsStdoutAndStderrPerRank) {
  Result r = Launch({"-n", "2", "--", "sh", "-c",
                     "echo out-$CHORUS_RANK; echo err-$CHORUS_RANK >&2; printf tail-$CHORUS_RANK"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(SortedLines(r.out),
            (std::vector<std::string>{"[0] out-0", "[0] tail-0", "[1] out-1", "[1] tail-1"}));
  EXPECT_EQ(SortedLines(r.err), (std::vector<std::string>{"[0] err-0", "[1] err-1"}));
  EXPECT_EQ(r.out.back(), '\n') << "a final partial line is printed as a whole line";
}

TEST(ChorusRun, NoTagOutputPrintsLinesAsTheyAre) {
  Result r = Launch({"-n", "2", "--no-tag-output", "sh", "-c", "echo plain"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "plain\nplain\n");
}

TEST(ChorusRun, RunsProgramWithoutDoubleDash) {
  Result r = Launch({"-n", "2", "echo", "hi", "-n"});  // options after the program are its own
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(SortedLines(r.out), (std::vector<std::string>{"[0] hi -n", "[1] hi -n"}));
}

TEST(ChorusRun, LinesOfDifferentRanksNeverMix) {
  const std::string body(300, 'x');
  Result r =
      Launch({"-n", "4", "sh", "-c",
              "i=0; while [ $i -lt 300 ]; do echo $CHORUS_RANK:" + body + "; i=$((i+1)); done"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = SortedLines(r.out);
  ASSERT_EQ(lines.size(), 1200u);
  for (const std::string& line : lines) {
    char rank = line[1];
    ASSERT_EQ(line, std::string("[") + rank + "] " + rank + ":" + body);
  }
}

TEST(ChorusRun, PassesExtraEnvironment) {
  Result r =
      Launch({"-n", "1", "-x", "FOO=bar", "-x", "BAZ=a=b", "--", "sh", "-c", "echo $FOO $BAZ"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[0] bar a=b\n");
}

TEST(ChorusRun, FailingRankStopsTheOthersQuickly) {
  Result r = Launch(
      {"-n", "4", "--", "sh", "-c", "if [ $CHORUS_RANK = 2 ]; then exit 3; fi; exec sleep 30"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("rank 2 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with status 3; stopping the other 3 ranks"), std::string::npos)
      << r.err;
  EXPECT_EQ(Count(r.err, "chorus-run: rank"), 1u) << "only the cause is reported\n" << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(ChorusRun, NamesRankKilledBySignal) {
  Result r = Launch(
      {"-n", "3", "sh", "-c", "if [ $CHORUS_RANK = 1 ]; then kill -9 $$; fi; exec sleep 30"});
  EXPECT_EQ(r.code, 128 + 9);
  EXPECT_NE(r.err.find("rank 1 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was killed by signal 9"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(ChorusRun, MissingProgramIsAClearError) {
  Result r = Launch({"-n", "2", "--", "/nonexistent/chorus-no-such-program"});
  EXPECT_EQ(r.code, 127);
  EXPECT_NE(r.err.find("/nonexistent/chorus-no-such-program"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(ChorusRun, TimeoutStopsAHangingJob) {
  Result r = Launch({"-n", "2", "--timeout", "0.5", "--", "sleep", "30"});
  EXPECT_EQ(r.code, 124);
  EXPECT_NE(r.err.find("timeout of 0.5 s"), std::string::npos) << r.err;
  EXPECT_GE(r.seconds, 0.4);
  EXPECT_LT(r.seconds, 4.0);
}

TEST(ChorusRun, TimeoutKillsRanksThatIgnoreSigterm) {
  Result r = Launch({"-n", "2", "--timeout", "0.3", "--", "sh", "-c",
                     "trap '' TERM; while :; do sleep 0.1; done"});
  EXPECT_EQ(r.code, 124);
  EXPECT_NE(r.err.find("sending SIGKILL"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 6.0);
}

// Signals chorus-run with `sig` once every rank has printed "ready" (their traps are set by then).
Watcher SignalWhenReady(int ranks, int sig) {
  auto sent = std::make_shared<bool>(false);
  return [=](const Result& r, pid_t pid) {
    if (!*sent && Count(r.out, "ready") == static_cast<size_t>(ranks)) {
      kill(pid, sig);
      *sent = true;
    }
  };
}

TEST(ChorusRun, ForwardsSigtermToEveryRank) {
  Result r = Launch({"-n", "2", "--", "sh", "-c",
                     "trap 'echo got-TERM-$CHORUS_RANK; exit 0' TERM; echo ready; "
                     "while :; do sleep 0.1; done"},
                    SignalWhenReady(2, SIGTERM));
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.err;
  EXPECT_NE(r.out.find("[0] got-TERM-0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1] got-TERM-1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("received SIGTERM; forwarding it to 2 ranks"), std::string::npos) << r.err;
}

TEST(ChorusRun, SecondSigintKillsTheJob) {
  auto first = SignalWhenReady(2, SIGINT);
  auto second_sent = std::make_shared<bool>(false);
  Watcher watch = [=](const Result& r, pid_t pid) {
    first(r, pid);
    // Send the second only after chorus-run has acted on the first.
    if (!*second_sent && r.err.find("forwarding") != std::string::npos) {
      kill(pid, SIGINT);
      *second_sent = true;
    }
  };
  Result r = Launch(
      {"-n", "2", "--", "sh", "-c", "trap '' INT; echo ready; while :; do sleep 0.1; done"}, watch);
  EXPECT_EQ(r.code, 128 + SIGINT) << r.err;
  EXPECT_NE(r.err.find("second SIGINT: killing 2 ranks"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

// The CPUs this test process may use, in order (chorus-run inherits the same mask).
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::string CpuList(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

// Each rank prints the CPUs it may run on, as a comma list (ranges expanded by the shell).
Result LaunchPrintingCpus(const std::vector<std::string>& options, int np) {
  std::vector<std::string> args = {"-n", std::to_string(np)};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(),
              {"--", "sh", "-c",
               "l=$(grep Cpus_allowed_list /proc/self/status | cut -f2); out=''; "
               "for r in $(echo $l | tr , ' '); do a=${r%-*}; b=${r#*-}; "
               "for c in $(seq $a $b); do out=\"$out${out:+,}$c\"; done; done; echo $out"});
  return Launch(args);
}

// Like mpirun, chorus-run binds rank i to the i-th CPU it may use when there are enough, deals
// ranks out round-robin when they are a multiple of the CPUs, and leaves them unbound when asked
// to or when they do not divide evenly.
TEST(ChorusRun, BindsEachRankToACoreOfItsOwn) {
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  const int np = std::min<int>(2, int(cpus.size()));
  Result bound = LaunchPrintingCpus({}, np);
  ASSERT_EQ(bound.code, 0) << bound.err;
  std::vector<std::string> lines = SortedLines(bound.out);
  ASSERT_EQ(int(lines.size()), np) << bound.out;
  for (int rank = 0; rank < np; ++rank)
    EXPECT_EQ(lines[rank], "[" + std::to_string(rank) + "] " + std::to_string(cpus[rank]));

  Result none = LaunchPrintingCpus({"--bind-to", "none"}, np);
  ASSERT_EQ(none.code, 0) << none.err;
  for (const std::string& line : SortedLines(none.out))
    EXPECT_EQ(line.substr(line.find(' ') + 1), CpuList(cpus)) << line;

  const int twice = 2 * int(cpus.size());
  Result dealt = LaunchPrintingCpus({}, twice);
  ASSERT_EQ(dealt.code, 0) << dealt.err;
  for (const std::string& line : SortedLines(dealt.out)) {
    const int rank = std::stoi(line.substr(1));
    EXPECT_EQ(line.substr(line.find(' ') + 1), std::to_string(cpus[rank % cpus.size()])) << line;
  }

  if (cpus.size() >= 2) {  // N + 1 ranks do not divide evenly: unbound
    Result crowded = LaunchPrintingCpus({}, int(cpus.size()) + 1);
    ASSERT_EQ(crowded.code, 0) << crowded.err;
    for (const std::string& line : SortedLines(crowded.out))
      EXPECT_EQ(line.substr(line.find(' ') + 1), CpuList(cpus)) << line;
  }
}

TEST(ChorusRun, RejectsBadUsage) {
  EXPECT_EQ(Launch({"echo", "hi"}).code, 2);  // no -n
  EXPECT_EQ(Launch({"-n", "0", "echo"}).code, 2);
  EXPECT_EQ(Launch({"-n", "1025", "echo"}).code, 2);
  EXPECT_EQ(Launch({"-n", "2"}).code, 2);  // no program
  EXPECT_EQ(Launch({"-n", "2", "-x", "NOVALUE", "echo"}).code, 2);
  EXPECT_EQ(Launch({"-n", "2", "--timeout", "-1", "echo"}).code, 2);
  EXPECT_EQ(Launch({"-n", "2", "--bind-to", "socket", "echo"}).code, 2);
  Result bad = Launch({"-n", "2", "--bogus", "echo"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--bogus"), std::string::npos) << bad.err;
  Result help = Launch({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: chorus-run -n N"), std::string::npos);
}

}  // namespace
