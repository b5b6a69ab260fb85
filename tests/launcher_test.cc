// Launchers: Open MPI's mpirun starting ranks on two namespace-hosts (through an rsh agent that
// runs `ip netns exec`), and Slurm's variables read as srun would set them. Chorus must come
// up from the launcher's environment alone, plus the root address (CHORUS_COMM_ID).
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "chorus/communicator.h"
#include "harness/bin_dir.h"
#include "harness/multirank.h"
#include "netns/netns_hosts.h"

namespace chorus::test {
namespace {

// The name of an up, non-loopback IPv4 interface of this host, or "" when it has none.
std::string nonLoopbackInterface() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string name;
  for (ifaddrs* i = all; i && name.empty(); i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
        !(i->ifa_flags & IFF_LOOPBACK))
      name = i->ifa_name;
  freeifaddrs(all);
  return name;
}

// A job on a loopback root without CHORUS_SECRET gets a secret derived from the root address and
// the job id, which any program can compute: fine while everything listens on loopback only. A
// rank told to put its TCP transport on another interface must refuse rather than open a door
// there that the derived secret does not guard, and say how to fix it; with CHORUS_INSECURE=1
// (the user's opt-in) or a real secret the same job runs.
TEST(Launchers, DerivedSecretKeepsTcpListenersOnLoopback) {
  const std::string ifname = nonLoopbackInterface();
  if (ifname.empty()) GTEST_SKIP() << "this host has no non-loopback IPv4 interface";
  int port = 20000 + (getpid() * 7) % 20000;
  for (const char* extra : {"", "CHORUS_INSECURE", "CHORUS_SECRET"}) {
    const std::string mode = extra;
    const int jobPort = port++;
    auto results = runRanks(2, [&](RankContext& ctx) {
      setenv("CHORUS_RANK", std::to_string(ctx.rank).c_str(), 1);
      setenv("CHORUS_WORLD_SIZE", "2", 1);
      setenv("CHORUS_COMM_ID", ("127.0.0.1:" + std::to_string(jobPort)).c_str(), 1);
      setenv("CHORUS_TRANSPORT", "tcp", 1);
      setenv("CHORUS_SOCKET_IFNAME", ifname.c_str(), 1);
      setenv("CHORUS_TIMEOUT", "20", 1);
      unsetenv("CHORUS_SECRET");
      unsetenv("CHORUS_INSECURE");
      if (mode == "CHORUS_INSECURE") setenv("CHORUS_INSECURE", "1", 1);
      if (mode == "CHORUS_SECRET")
        setenv("CHORUS_SECRET", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
               1);
      Config c;
      Status st = Config::fromEnvironment(&c);
      std::unique_ptr<Communicator> comm;
      if (st.ok()) st = Communicator::createFromEnvironment(c, &comm);
      if (mode.empty()) {
        const std::string msg = st.toString();
        if (st.ok() || msg.find("derived") == std::string::npos ||
            msg.find("CHORUS_SECRET") == std::string::npos ||
            msg.find("CHORUS_INSECURE=1") == std::string::npos || !namesRank(msg, ctx.rank)) {
          ctx.report("expected a refusal naming this rank and the fixes, got: %s", msg.c_str());
          return 1;
        }
        return 0;
      }
      int x = ctx.rank + 1, sum = 0;
      if (st.ok()) st = comm->allReduce(&x, &sum, 1, DataType::Int32, {});
      if (!st.ok() || sum != 3) {
        ctx.report("with %s: %s, sum %d", mode.c_str(), st.toString().c_str(), sum);
        return 1;
      }
      return 0;
    });
    EXPECT_EQ(describeFailures(results), "") << (mode.empty() ? "no secret" : mode);
  }
}

TEST(Launchers, MpirunAcrossTwoNamespaceHosts) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "mpirun not installed (Debian: openmpi-bin)";
  const std::string sweep = binDir() + "/allreduce-sweep";
  if (access(sweep.c_str(), X_OK) != 0) GTEST_SKIP() << sweep << " not built";
  NetnsHosts net(2);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  const std::string dir = NetnsHosts::script().substr(0, NetnsHosts::script().rfind('/'));
  // mpirun runs inside host 0 (so its daemons on host 1 can call back) and reaches host 1
  // through the agent, as it would reach a node through ssh.
  std::string cmd =
      "CHORUS_NETNS_TAG=" + net.tag() + " timeout 90 " + NetnsHosts::script() + " exec " +
      net.tag() + " 0 mpirun --allow-run-as-root -H 10.77.0.1:2,10.77.0.2:2 -np 4 " +
      "--mca plm_rsh_agent " + dir + "/rsh_agent.sh -x CHORUS_COMM_ID=10.77.0.1:29511 " +
      // Beyond loopback a job needs a secret, passed as the README shows.
      "-x CHORUS_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \\n') " +
      "-x CHORUS_TIMEOUT=30 " + sweep + " -b 1K -e 4M -f 16 -t 0.05 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[1024];
  while (fgets(buf, sizeof buf, p)) out += buf;
  int rc = pclose(p);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("4 ranks"), std::string::npos) << out;
  EXPECT_NE(out.find("4194304"), std::string::npos) << "the sweep did not reach 4 MiB:\n" << out;
}

// srun sets SLURM_PROCID/NTASKS/LOCALID/JOB_ID; the job script exports MASTER_ADDR/PORT.
TEST(Launchers, SlurmVariablesAreEnough) {
  NetnsHosts net(2);  // on two namespace-hosts when possible, else on this host
  const bool hosts = net.ok();
  auto results = runRanks(
      2,
      [hosts](RankContext& ctx) {
        setenv("SLURM_PROCID", std::to_string(ctx.rank).c_str(), 1);
        setenv("SLURM_NTASKS", "2", 1);
        setenv("SLURM_LOCALID", hosts ? "0" : std::to_string(ctx.rank).c_str(), 1);
        setenv("SLURM_NTASKS_PER_NODE", hosts ? "1" : "2", 1);
        setenv("SLURM_JOB_ID", "4242", 1);
        setenv("MASTER_ADDR", hosts ? "10.77.0.1" : "127.0.0.1", 1);
        setenv("MASTER_PORT", hosts ? "29512" : std::to_string(20000 + getppid() % 20000).c_str(),
               1);
        setenv("CHORUS_TIMEOUT", "30", 1);
        // The job script exports a secret, which srun passes on (README, "Launching").
        setenv("CHORUS_SECRET", "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed",
               1);
        Config c;
        Status st = Config::fromEnvironment(&c);  // CHORUS_HOSTID: the namespace-host
        std::unique_ptr<Communicator> comm;
        if (st.ok()) st = Communicator::createFromEnvironment(c, &comm);
        if (!st.ok()) {
          ctx.report("createFromEnvironment: %s", st.toString().c_str());
          return 1;
        }
        if (comm->rank() != ctx.rank || comm->size() != 2) {
          ctx.report("rank %d of %d, expected %d of 2", comm->rank(), comm->size(), ctx.rank);
          return 1;
        }
        std::vector<int> a(1000, ctx.rank + 1), b(1000);
        st = comm->allReduce(a.data(), b.data(), a.size(), DataType::Int32, {});
        if (!st.ok() || b[999] != 3) {
          ctx.report("allreduce: %s, b[999]=%d", st.toString().c_str(), b[999]);
          return 1;
        }
        return 0;
      },
      60, [&net, hosts](int rank) { return hosts ? net.enterHost(rank) : 0; });
  EXPECT_EQ(describeFailures(results), "");
  if (!hosts) printf("(ran on one host: %s)\n", net.whyNot().c_str());
}

}  // namespace
}  // namespace chorus::test
