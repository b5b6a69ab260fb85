// The ABI proof: compiled against NVIDIA's nccl.h, linked against Chorus's libnccl.so.2, four
// real processes run every collective for every datatype and every reduction op (PreMulSum
// included) on host buffers with stream NULL.
#include <gtest/gtest.h>

#include <functional>

#include "nccl.h"
#include "nccl_ranks.h"
#include "nccl_values.h"

using namespace nccltest;

namespace {

constexpr int kRanks = 4;
constexpr size_t kCount = 37;  // not a multiple of the rank count
constexpr size_t kRsCount = 9;

// Inputs of the reductions: 1 or 2, so sums, products, averages and 2x pre-multiplied sums of
// four ranks stay exact even in fp8 e5m2, whatever the order of combination.
double redIn(int rank, size_t i) {
  return 1 + double((size_t(rank) + i) % 2);
}
// Inputs of the data-movement collectives: distinct small integers per (rank, index).
double moveIn(int rank, size_t i) {
  return double((size_t(rank) * 7 + i) % 5 + 1);
}

struct Op {
  ncclRedOp_t op;  // for PreMulSum: ncclNumOps until created
  bool premul;
  const char* name;
};
const Op kOps[] = {{ncclSum, false, "sum"}, {ncclProd, false, "prod"},
                   {ncclMax, false, "max"}, {ncclMin, false, "min"},
                   {ncclAvg, false, "avg"}, {ncclNumOps, true, "premulsum"}};

double expected(const Op& op, ncclDataType_t t, size_t i) {
  double sum = 0, prod = 1, mx = -1e300, mn = 1e300;
  for (int r = 0; r < kRanks; ++r) {
    double v = redIn(r, i);
    sum += v, prod *= v, mx = std::max(mx, v), mn = std::min(mn, v);
  }
  if (op.premul) return 2 * sum;
  switch (op.op) {
    case ncclSum:
      return sum;
    case ncclProd:
      return prod;
    case ncclMax:
      return mx;
    case ncclMin:
      return mn;
    default:
      return isFloat(t) ? sum / kRanks : double(int64_t(sum) / kRanks);
  }
}

#define CHECK_VALUES(buf, n, t, fn)                                                               \
  for (size_t i_ = 0; i_ < (n); ++i_)                                                             \
    RANK_REQUIRE(get((buf), i_, (t)) == (fn)(i_), "%s element %zu: got %g, want %g", typeName(t), \
                 i_, get((buf), i_, (t)), double((fn)(i_)));

int reductions(int rank, ncclComm_t comm, ncclDataType_t t) {
  for (Op op : kOps) {
    std::vector<unsigned char> two(8);
    put(two.data(), 0, t, 2);
    if (op.premul)
      RANK_NCCL(ncclRedOpCreatePreMulSum(&op.op, two.data(), t, ncclScalarHostImmediate, comm));
    auto want = [&](size_t i) { return expected(op, t, i); };
    auto in = makeBuffer(kCount * kRanks, t), out = makeBuffer(kCount * kRanks, t);
    for (size_t i = 0; i < kCount * kRanks; ++i) put(in.data(), i, t, redIn(rank, i));

    RANK_NCCL(ncclAllReduce(in.data(), out.data(), kCount, t, op.op, comm, nullptr));
    CHECK_VALUES(out.data(), kCount, t, want);

    auto inplace = in;
    RANK_NCCL(ncclAllReduce(inplace.data(), inplace.data(), kCount, t, op.op, comm, nullptr));
    CHECK_VALUES(inplace.data(), kCount, t, want);

    const int root = 1;
    auto red = makeBuffer(kCount, t);
    RANK_NCCL(ncclReduce(in.data(), red.data(), kCount, t, op.op, root, comm, nullptr));
    if (rank == root) CHECK_VALUES(red.data(), kCount, t, want);

    auto rs = makeBuffer(kRsCount, t);
    RANK_NCCL(ncclReduceScatter(in.data(), rs.data(), kRsCount, t, op.op, comm, nullptr));
    auto wantRs = [&](size_t i) { return expected(op, t, rank * kRsCount + i); };
    CHECK_VALUES(rs.data(), kRsCount, t, wantRs);

    if (op.premul) RANK_NCCL(ncclRedOpDestroy(op.op, comm));
  }
  return 0;
}

int movement(int rank, ncclComm_t comm, ncclDataType_t t) {
  auto mine = makeBuffer(kCount, t), all = makeBuffer(kCount * kRanks, t);
  for (size_t i = 0; i < kCount; ++i) put(mine.data(), i, t, moveIn(rank, i));
  auto gathered = [&](size_t i) { return moveIn(int(i / kCount), i % kCount); };

  RANK_NCCL(ncclAllGather(mine.data(), all.data(), kCount, t, comm, nullptr));
  CHECK_VALUES(all.data(), kCount * kRanks, t, gathered);

  auto bc = mine;
  RANK_NCCL(ncclBroadcast(mine.data(), bc.data(), kCount, t, 2, comm, nullptr));
  CHECK_VALUES(bc.data(), kCount, t, [&](size_t i) { return moveIn(2, i); });
  auto bc2 = mine;
  RANK_NCCL(ncclBcast(bc2.data(), kCount, t, 3, comm, nullptr));
  CHECK_VALUES(bc2.data(), kCount, t, [&](size_t i) { return moveIn(3, i); });

  // Block j of rank r's send buffer goes to rank j: value of (r, j, i).
  auto a2aIn = makeBuffer(kCount * kRanks, t), a2aOut = makeBuffer(kCount * kRanks, t);
  auto blockVal = [](int from, int to, size_t i) { return double((from + 2 * to + i) % 6 + 1); };
  for (size_t i = 0; i < kCount * kRanks; ++i)
    put(a2aIn.data(), i, t, blockVal(rank, int(i / kCount), i % kCount));
  RANK_NCCL(ncclAlltoAll(a2aIn.data(), a2aOut.data(), kCount, t, comm, nullptr));
  CHECK_VALUES(a2aOut.data(), kCount * kRanks, t,
               [&](size_t i) { return blockVal(int(i / kCount), rank, i % kCount); });

  auto g = makeBuffer(kCount * kRanks, t);
  RANK_NCCL(ncclGather(mine.data(), g.data(), kCount, t, 1, comm, nullptr));
  if (rank == 1) CHECK_VALUES(g.data(), kCount * kRanks, t, gathered);

  auto sc = makeBuffer(kCount, t);
  RANK_NCCL(ncclScatter(rank == 3 ? all.data() : nullptr, sc.data(), kCount, t, 3, comm, nullptr));
  CHECK_VALUES(sc.data(), kCount, t, [&](size_t i) { return moveIn(rank, i); });
  return 0;
}

class NcclAbiEveryType : public ::testing::TestWithParam<int> {};

TEST_P(NcclAbiEveryType, EveryCollectiveAndOp) {
  const ncclDataType_t t = ncclDataType_t(GetParam());
  std::string failures = runRanks(kRanks, [t](int rank, int n, const ncclUniqueId& id) {
    ncclComm_t comm;
    RANK_NCCL(ncclCommInitRank(&comm, n, id, rank));
    if (int rc = reductions(rank, comm, t)) return rc;
    if (int rc = movement(rank, comm, t)) return rc;
    RANK_NCCL(ncclCommDestroy(comm));
    return 0;
  });
  EXPECT_EQ(failures, "") << typeName(t);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, NcclAbiEveryType, ::testing::Range(0, int(ncclNumTypes)),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(typeName(ncclDataType_t(p.param)));
                         });

}  // namespace
