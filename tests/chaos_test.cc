// The chaos suite (tests/harness/chaos_trial.h): trials with a random collective, algorithm,
// transport, size, victim, fault and moment, each of which must end with every rank still
// running failing within the deadline and naming the lost rank, abort() and destruction
// returning, and nothing left in /dev/shm. One test per fault kind (two for SIGSTOP, whose
// trials wait out the deadline), so that ctest -j2 spreads them.
//
// The trials follow from a base seed, printed, and CHORUS_CHAOS_SEED=<n> replaces it; a failed
// trial prints its own seed, and CHORUS_CHAOS_TRIAL=<seed> with --gtest_filter=Chaos.<test>
// runs that trial alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "harness/chaos_trial.h"
#include "netns/netns_hosts.h"

namespace chorus::test {
namespace {

constexpr uint64_t kBaseSeed = 2108;
// Short, so that trials whose faults only a deadline can reveal stay short.
constexpr double kTimeoutSec = 3;

std::optional<uint64_t> seedFromEnv(const char* name) {
  const char* v = getenv(name);
  if (!v || !*v) return std::nullopt;
  return strtoull(v, nullptr, 10);
}

// `stream` keeps each test's trials apart under one base seed.
void runTrials(FaultKind kind, int trials, uint64_t stream, const NetnsHosts* net = nullptr) {
  const uint64_t base = seedFromEnv("CHORUS_CHAOS_SEED").value_or(kBaseSeed);
  std::vector<uint64_t> seeds;
  if (auto only = seedFromEnv("CHORUS_CHAOS_TRIAL")) {
    seeds.push_back(*only);
  } else {
    for (int i = 0; i < trials; ++i) seeds.push_back(base * 1000000 + stream * 10000 + i);
  }
  printf("[ chaos    ] %s: base seed %llu (CHORUS_CHAOS_SEED), timeout %.0f s\n", faultName(kind),
         (unsigned long long)base, kTimeoutSec);
  int detected = 0, passed = 0, hitSetUp = 0;
  double worst = 0;
  uint64_t worstSeed = 0;
  for (uint64_t seed : seeds) {
    const TrialPlan plan = drawTrial(seed, kind);
    const TrialOutcome o = runTrial(plan, kTimeoutSec, net);
    detected += o.detected;
    passed += o.passed;
    hitSetUp += o.hitSetUp;
    if (o.detected && o.detectionSec >= worst) worst = o.detectionSec, worstSeed = seed;
    if (!o.passed) {
      printf("[ chaos FAILED ] %s\n%s", plan.describe().c_str(), o.failure.c_str());
      ADD_FAILURE() << "trial " << plan.describe() << ":\n" << o.failure;
    }
    fflush(stdout);
  }
  printf(
      "[ measured ] chaos %s: %zu trials (%d struck set-up), %d detected, %d passed, worst "
      "detection %.2f s (seed %llu)\n",
      faultName(kind), seeds.size(), hitSetUp, detected, passed, worst,
      (unsigned long long)worstSeed);
}

TEST(Chaos, Kill) {
  runTrials(FaultKind::Kill, 110, 1);
}
TEST(Chaos, StopA) {
  runTrials(FaultKind::Stop, 30, 2);
}
TEST(Chaos, StopB) {
  runTrials(FaultKind::Stop, 30, 3);
}
TEST(Chaos, LinkCut) {
  NetnsHosts net(4);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  runTrials(FaultKind::LinkCut, 30, 4, &net);
}

}  // namespace
}  // namespace chorus::test
