// Launchers: Open MPI's mpirun starting ranks on two namespace-hosts (through an rsh agent that
// runs `ip netns exec`), and Slurm's variables read as srun would set them. Chorus must come
// up from the launcher's environment alone, plus the root address (CHORUS_COMM_ID).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "chorus/communicator.h"
#include "harness/bin_dir.h"
#include "harness/multirank.h"
#include "netns/netns_hosts.h"

namespace chorus::test {
namespace {

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
