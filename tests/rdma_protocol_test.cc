// The RDMA protocol's parts that need no NIC: immediate data, credit accounting, FIFO slots
// landing out of order and wrapping around, the registration cache, the settings; and the
// libfabric provider itself, two endpoints in one process over its tcp provider on loopback.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "common/clock.h"
#include "transport/rdma/rdma_nic.h"
#include "transport/rdma/rdma_options.h"
#include "transport/rdma/rdma_window.h"
#include "transport/rdma/registration_cache.h"

namespace chorus {
namespace {

TEST(RdmaImm, RoundTripsEveryKindRankAndValue) {
  for (ImmKind k : {ImmKind::kData, ImmKind::kCredit, ImmKind::kGoodbye})
    for (int rank : {0, 1, 4095, kMaxImmRanks - 1})
      for (uint32_t v : {0u, 1u, 200u, kMaxImmValue}) {
        const Imm got = decodeImm(encodeImm(k, rank, v));
        EXPECT_EQ(got.kind, k);
        EXPECT_EQ(got.rank, rank);
        EXPECT_EQ(got.value, v);
      }
}

TEST(RdmaCredits, ASenderStopsAtTheWindowAndResumesOnCredits) {
  SendWindow w(4);
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(w.hasCredit());
    EXPECT_EQ(w.slotOf(w.next()), k);
    w.before();
    w.posted();
  }
  EXPECT_FALSE(w.hasCredit());
  EXPECT_TRUE(w.credit(1));
  EXPECT_TRUE(w.hasCredit());
  EXPECT_EQ(w.slotOf(w.next()), 0);  // wraps around
  // Credits in any order add up; more than was sent is a broken peer.
  EXPECT_TRUE(w.credit(3));
  EXPECT_FALSE(w.credit(1));
}

TEST(RdmaCredits, ACreditForAMessageBeingPostedCounts) {
  SendWindow w(2);
  w.before();                // the write is out; its credit may come back at once
  EXPECT_TRUE(w.credit(1));  // before posted() returned
  w.posted();
  SendWindow v(2);
  v.before();
  v.notPosted();  // the provider was busy: it was never sent
  EXPECT_FALSE(v.credit(1));
}

TEST(RdmaFifo, SlotsLandOutOfOrderAndAreTakenInOrder) {
  ReceiveWindow r(4);
  EXPECT_EQ(r.ready(), -1);
  ASSERT_TRUE(r.arrive(1));  // message 1 overtook message 0 on another lane
  EXPECT_EQ(r.ready(), -1);
  ASSERT_TRUE(r.arrive(0));
  EXPECT_EQ(r.ready(), 0);
  r.release();
  EXPECT_EQ(r.ready(), 1);
  r.release();
  EXPECT_EQ(r.takeCredits(kMaxImmValue), 2u);
  EXPECT_EQ(r.takeCredits(kMaxImmValue), 0u);
  // Wrap-around: messages 2..5 land in slots 2, 3, 0, 1.
  for (uint32_t s : {3u, 0u, 2u, 1u}) ASSERT_TRUE(r.arrive(s));
  for (int want : {2, 3, 0, 1}) {
    EXPECT_EQ(r.ready(), want);
    r.release();
  }
  EXPECT_EQ(r.consumed(), 6u);
  EXPECT_EQ(r.takeCredits(3), 3u);  // capped, the rest still owed
  EXPECT_TRUE(r.owesCredits());
  r.giveBack(3);
  EXPECT_EQ(r.takeCredits(kMaxImmValue), 4u);
}

TEST(RdmaFifo, AWriteIntoAFullOrUnknownSlotIsAProtocolError) {
  ReceiveWindow r(2);
  ASSERT_TRUE(r.arrive(0));
  EXPECT_FALSE(r.arrive(0));
  EXPECT_FALSE(r.arrive(2));
}

// A stand-in registration that records what was registered and when it is dropped.
struct CountingRegion : RdmaRegion {
  CountingRegion(int* live) : live_(live) { ++*live_; }
  ~CountingRegion() override { --*live_; }
  void* desc() const override { return nullptr; }
  uint64_t key() const override { return 7; }
  uint64_t remoteAddress(const void* p) const override { return uint64_t(uintptr_t(p)); }
  int* live_;
};

TEST(RdmaRegistrationCache, ReusesCoveringEntriesAndEvictsOnlyIdleOnes) {
  int live = 0, registered = 0;
  size_t lastBytes = 0;
  RegistrationCache cache(
      [&](void* p, size_t bytes, std::unique_ptr<RdmaRegion>* out) {
        ++registered;
        lastBytes = bytes;
        EXPECT_EQ(uintptr_t(p) % 4096, 0u);  // whole pages
        out->reset(new CountingRegion(&live));
        return Status::Ok();
      },
      2);
  std::vector<char> a(1 << 20), b(1 << 20), c(1 << 20);
  const RdmaRegion* ra = nullptr;
  ASSERT_TRUE(cache.acquire(a.data() + 100, 5000, &ra).ok());
  EXPECT_GE(lastBytes, 5000u);
  const RdmaRegion* again = nullptr;
  ASSERT_TRUE(cache.acquire(a.data() + 200, 1000, &again).ok());  // inside the same pages
  EXPECT_EQ(again, ra);
  EXPECT_EQ(cache.hits(), 1u);
  const RdmaRegion* rb = nullptr;
  ASSERT_TRUE(cache.acquire(b.data(), b.size(), &rb).ok());
  EXPECT_EQ(registered, 2);
  // Both entries are in use: a third may not evict them.
  const RdmaRegion* rc = nullptr;
  ASSERT_TRUE(cache.acquire(c.data(), c.size(), &rc).ok());
  EXPECT_EQ(live, 3);
  cache.release(ra), cache.release(again), cache.release(rb), cache.release(rc);
  // Now idle: the least recently used (a) makes room for the next.
  const RdmaRegion* ra2 = nullptr;
  ASSERT_TRUE(cache.acquire(a.data(), 64 << 10, &ra2).ok());
  cache.release(ra2);
  EXPECT_LE(cache.entries(), 3u);
  EXPECT_EQ(live, int(cache.entries()));
}

TEST(RdmaRegistrationCache, AFailedRegistrationIsReturned) {
  RegistrationCache cache(
      [](void*, size_t, std::unique_ptr<RdmaRegion>*) {
        return Status::SystemError("no memlock left");
      },
      4);
  char x[16] = {};
  const RdmaRegion* r = nullptr;
  Status st = cache.acquire(x, sizeof x, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(cache.entries(), 0u);
}

TEST(RdmaOptions, BadSettingsAreRefusedByName) {
  Config c;
  c.net = "carrier-pigeon";
  EXPECT_NE(c.validate().message().find("CHORUS_NET"), std::string::npos);
  c = Config{};
  c.rdmaSlots = 1000;
  EXPECT_NE(c.validate().message().find("CHORUS_RDMA_SLOTS"), std::string::npos);
  c = Config{};
  c.rdmaLanes = 0;
  EXPECT_NE(c.validate().message().find("CHORUS_RDMA_LANES"), std::string::npos);
  c = Config{};
  c.rdmaChunkBytes = 100;
  EXPECT_NE(c.validate().message().find("CHORUS_RDMA_CHUNK_BYTES"), std::string::npos);
  EXPECT_TRUE(Config{}.validate().ok());
}

TEST(RdmaOptions, SlotsFollowThePeerCountUnlessSet) {
  RdmaOptions o;  // slots 0: sized by peer count
  const size_t slot = 64 + (512 << 10);
  EXPECT_EQ(o.slotsFor(1, slot), 64);  // the most
  EXPECT_EQ(o.slotsFor(2, slot), 63);  // 64 MiB of FIFO over 2 peers
  EXPECT_EQ(o.slotsFor(4, slot), 31);
  EXPECT_EQ(o.slotsFor(8, slot), 16);  // the fewest, as before
  EXPECT_EQ(o.slotsFor(1000, slot), 16);
  EXPECT_EQ(o.slotsFor(1, 64 + (16 << 20)), 16);  // large chunks stay at the fewest
  o.slots = 5;
  EXPECT_EQ(o.slotsFor(1, slot), 5);
  EXPECT_EQ(o.slotsFor(1000, slot), 5);
}

TEST(RdmaOptions, NcclNetNamesMapOntoChorusNet) {
  setenv("NCCL_NET", "IB", 1);
  setenv("NCCL_IB_HCA", "=mlx5_0:1", 1);
  Config c;
  ASSERT_TRUE(Config::fromEnvironment(&c, Config::Names::ChorusThenNccl).ok());
  EXPECT_EQ(c.net, "ib");
  EXPECT_EQ(c.ibHca, "=mlx5_0:1");
  setenv("NCCL_NET", "Socket", 1);
  ASSERT_TRUE(Config::fromEnvironment(&c, Config::Names::ChorusThenNccl).ok());
  EXPECT_EQ(c.net, "socket");
  ASSERT_TRUE(Config::fromEnvironment(&c).ok());  // Chorus's own names only
  EXPECT_EQ(c.net, "auto");
  unsetenv("NCCL_NET");
  unsetenv("NCCL_IB_HCA");
}

// The libfabric provider without the transport: two NICs of this process, its tcp provider
// on loopback, a gathered write with immediate data.
TEST(OfiNic, AGatheredWriteLandsWithItsImmediateData) {
  RdmaNicOptions o;
  o.ofiProvider = "tcp";
  o.ofiSoftwareOk = true;
  o.loopbackOk = true;
  std::unique_ptr<RdmaNic> a, b;
  Status st = openOfiNic(o, &a);
  if (!st.ok()) GTEST_SKIP() << st.toString();
  ASSERT_TRUE(openOfiNic(o, &b).ok());
  std::vector<uint8_t> da, db;
  ASSERT_TRUE(a->prepare(0, 2, {1}, 2, &da).ok());
  ASSERT_TRUE(b->prepare(1, 2, {0}, 2, &db).ok());
  ASSERT_TRUE(a->connect(1, db.data(), db.size()).ok());
  ASSERT_TRUE(b->connect(0, da.data(), da.size()).ok());
  std::vector<char> src(8192), dst(8192, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = char(i * 7);
  std::unique_ptr<RdmaRegion> rs, rd;
  ASSERT_TRUE(a->registerMemory(src.data(), src.size(), &rs).ok());
  ASSERT_TRUE(b->registerMemory(dst.data(), dst.size(), &rd).ok());
  const RdmaGather g[2] = {{src.data(), 100, rs->desc()}, {src.data() + 1000, 3000, rs->desc()}};
  std::string error;
  bool written = false, arrived = false;
  const Deadline deadline = Deadline::after(10);
  auto progress = [&] {
    RdmaEvent e[4];
    for (int k = 0, n = a->poll(e, 4); k < n; ++k) {
      EXPECT_EQ(e[k].kind, RdmaEvent::kWritten) << e[k].error;
      written |= e[k].context == reinterpret_cast<void*>(uintptr_t(42));
    }
    for (int k = 0, n = b->poll(e, 4); k < n; ++k) {
      EXPECT_EQ(e[k].kind, RdmaEvent::kArrived);
      EXPECT_EQ(e[k].imm, 0xabcd1234u);
      arrived = true;
    }
  };
  // The first write to a peer may find its connection still being made (kBusy).
  PostResult r = PostResult::kBusy;
  while (r == PostResult::kBusy && !deadline.expired()) {
    r = a->write(1, 1, g, 2, {rd->remoteAddress(dst.data() + 64), rd->key()}, 0xabcd1234u,
                 reinterpret_cast<void*>(uintptr_t(42)), &error);
    progress();
  }
  ASSERT_EQ(r, PostResult::kPosted) << error;
  while (!(written && arrived) && !deadline.expired()) progress();
  ASSERT_TRUE(written && arrived);
  EXPECT_EQ(memcmp(dst.data() + 64, src.data(), 100), 0);
  EXPECT_EQ(memcmp(dst.data() + 164, src.data() + 1000, 3000), 0);
  EXPECT_EQ(dst[63], 0);
  EXPECT_EQ(dst[164 + 3000], 0);
}

TEST(OfiNic, SoftwareProvidersOnlyWhenForcedAndUnknownOnesNamed) {
  RdmaNicOptions o;
  o.ofiProvider = "tcp";
  std::unique_ptr<RdmaNic> nic;
  Status st = openOfiNic(o, &nic);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("only with CHORUS_NET=ofi"), std::string::npos) << st.toString();
  o.ofiProvider = "no-such-provider";
  o.ofiSoftwareOk = true;
  st = openOfiNic(o, &nic);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("CHORUS_OFI_PROVIDER=no-such-provider"), std::string::npos)
      << st.toString();
}

}  // namespace
}  // namespace chorus
