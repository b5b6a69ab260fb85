// Which NIC a rank takes when its host has several (transport/rails.h). The multi-rail run
// itself, two links per namespace-host, is MultiHostRails in multihost_test.cc.
#include "transport/rails.h"

#include <gtest/gtest.h>

namespace chorus {
namespace {

TEST(Rails, LocalRanksSpreadOverEquallyNearNics) {
  const std::vector<int> unknown = {-1, -1};
  EXPECT_EQ(chooseRail(unknown, -1, 0), 0u);
  EXPECT_EQ(chooseRail(unknown, -1, 1), 1u);
  EXPECT_EQ(chooseRail(unknown, -1, 2), 0u);
  EXPECT_EQ(chooseRail(unknown, 0, 3), 1u);  // my node known, theirs not: all as near
  EXPECT_EQ(chooseRail({-1}, -1, 5), 0u);
}

TEST(Rails, TheNicsOnMyNumaNodeComeFirst) {
  // Four NICs, two per node: ranks on node 1 share NICs 1 and 3, ranks on node 0 NICs 0 and 2.
  const std::vector<int> numa = {0, 1, 0, 1};
  EXPECT_EQ(chooseRail(numa, 1, 0), 1u);
  EXPECT_EQ(chooseRail(numa, 1, 1), 3u);
  EXPECT_EQ(chooseRail(numa, 1, 2), 1u);
  EXPECT_EQ(chooseRail(numa, 0, 1), 2u);
  // No NIC on my node: every NIC is as far.
  EXPECT_EQ(chooseRail(numa, 2, 3), 3u);
}

TEST(Rails, LocalIndexCountsTheLowerRanksOfMyHost) {
  const std::vector<int> hostOf = {0, 1, 0, 1, 0};  // round-robin placement
  EXPECT_EQ(localIndexOf(hostOf, 0), 0);
  EXPECT_EQ(localIndexOf(hostOf, 1), 0);
  EXPECT_EQ(localIndexOf(hostOf, 2), 1);
  EXPECT_EQ(localIndexOf(hostOf, 4), 2);
}

TEST(Rails, OneMatchingInterfaceIsTheOnlyRail) {
  NetInterface chosen;
  std::vector<std::string> rails;
  ASSERT_TRUE(findRailInterface("=lo", AF_INET, 3, &chosen, &rails).ok());
  EXPECT_EQ(chosen.name, "lo");
  EXPECT_EQ(rails, std::vector<std::string>{"lo"});
  EXPECT_EQ(chosen.addr.toString().rfind("127.0.0.1:", 0), 0u) << chosen.addr.toString();
  Status st = findRailInterface("=nosuchif0", AF_INET, 0, &chosen, &rails);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("matches no interface"), std::string::npos) << st.message();
}

TEST(Rails, RailNoteNamesTheRailsAndTheLocalRank) {
  EXPECT_EQ(railNote({"eth0", "eth1"}, 1), "; rails eth0, eth1 (local rank 1)");
}

}  // namespace
}  // namespace chorus
