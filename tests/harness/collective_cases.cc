#include "harness/collective_cases.h"

#include <cstring>
#include <vector>

#include "harness/reference.h"
#include "reduce/element.h"

namespace chorus::test {

const char* const kCollNames[10] = {"AllReduce", "ReduceScatter", "AllGather", "Broadcast",
                                    "Reduce",    "AllToAll",      "Gather",    "Scatter",
                                    "SendRecv",  "Barrier"};

bool reduces(Coll c) {
  return c == Coll::AllReduce || c == Coll::ReduceScatter || c == Coll::Reduce;
}

std::string caseName(Coll c, const Case& k) {
  return std::string(kCollNames[int(c)]) + "(count=" + std::to_string(k.count) + ", " +
         dataTypeName(k.t) + (reduces(c) ? std::string(", ") + redOpName(k.op) : "") +
         ", root=" + std::to_string(k.root) + (k.inPlace ? ", in-place)" : ", out-of-place)");
}

namespace {
// The scalar for PreMulSum: 3 for integers, 0.5 for floating point (exact in every type).
const void* premulScalar(DataType t, unsigned char* storage) {
  memset(storage, 0, 8);
  if (isFloatingPoint(t))
    storeElement(t, storage, 0, 0.5);
  else
    storage[0] = 3;
  return storage;
}
}  // namespace

std::vector<Case> casesFor(Coll c, int size) {
  std::vector<Case> out;
  std::vector<size_t> small = {0, 1, 7, 1023, size_t(size) * 13 + 1};
  std::vector<bool> places = {false, true};
  if (c == Coll::Gather || c == Coll::Scatter || c == Coll::SendRecv || c == Coll::Barrier)
    places = {false};
  const int ops = reduces(c) ? kNumRedOps : 1;
  int root = size > 1 ? size - 1 : 0;
  for (int t = 0; t < kNumDataTypes; ++t)
    for (int op = 0; op < ops; ++op)
      for (size_t n : small)
        for (bool ip : places) {
          out.push_back({DataType(t), RedOp(op), n, ip, root});
          root = (root + 1) % size;
        }
  // Large counts, a few types and ops: pipelining across many chunks, uneven segments.
  const size_t big =
      (c == Coll::AllReduce || c == Coll::Reduce || c == Coll::Broadcast || c == Coll::SendRecv)
          ? (size_t(1) << 20) + 3
          : ((size_t(1) << 20) + 3) / size + 1;
  const Case bigCases[] = {{DataType::Float32, RedOp::Sum, big, false, 0},
                           {DataType::Bfloat16, RedOp::Avg, big, true, size - 1},
                           {DataType::Int8, RedOp::Max, big, false, size / 2},
                           {DataType::Float64, RedOp::PreMulSum, big, true, 0}};
  for (const Case& k : bigCases) {
    Case x = k;
    if (!reduces(c)) x.op = RedOp::Sum;
    if (c == Coll::Gather || c == Coll::Scatter || c == Coll::SendRecv) x.inPlace = false;
    out.push_back(x);
  }
  return out;
}

// Runs one case on this rank and checks it; returns "" or what went wrong.
std::string runCase(Communicator& comm, Coll c, const Case& k, uint64_t seed) {
  const int r = comm.rank(), P = comm.size();
  const size_t e = dataTypeSize(k.t), n = k.count;
  unsigned char scalarStore[8];
  const void* scalar = k.op == RedOp::PreMulSum ? premulScalar(k.t, scalarStore) : nullptr;
  Reduction red{k.op, scalar};
  std::vector<unsigned char> in, out, inCopy;
  auto fill = [&](size_t elems, size_t firstIndex = 0) {
    in.assign(elems * e + 64, 0);
    fillInput(k.t, k.op, r, seed, in.data(), elems, firstIndex);
    inCopy = in;
  };
  auto unchanged = [&]() -> std::string {
    return !k.inPlace && in != inCopy ? "the send buffer was modified" : "";
  };
  Status st;
  std::string err;
  switch (c) {
    case Coll::AllReduce: {
      fill(n);
      out.assign(n * e + 64, 0xAB);
      void* dst = k.inPlace ? in.data() : out.data();
      st = comm.allReduce(in.data(), dst, n, k.t, red);
      if (st.ok()) err = checkReduced(k.t, k.op, scalar, P, seed, dst, n, 0) + unchanged();
      break;
    }
    case Coll::ReduceScatter: {
      fill(n * P);
      out.assign(n * e + 64, 0xAB);
      void* dst = k.inPlace ? in.data() + r * n * e : out.data();
      st = comm.reduceScatter(in.data(), dst, n, k.t, red);
      if (st.ok()) err = checkReduced(k.t, k.op, scalar, P, seed, dst, n, r * n) + unchanged();
      break;
    }
    case Coll::AllGather: {
      out.assign(n * P * e + 64, 0xAB);
      in.assign(n * e + 64, 0);
      fillInput(k.t, k.op, r, seed, k.inPlace ? out.data() + r * n * e : in.data(), n);
      inCopy = in;
      const void* src = k.inPlace ? out.data() + r * n * e : in.data();
      st = comm.allGather(src, out.data(), n, k.t);
      for (int q = 0; st.ok() && q < P; ++q)
        err += checkCopied(k.t, k.op, q, seed, out.data() + q * n * e, n, 0);
      err += unchanged();
      break;
    }
    case Coll::Broadcast: {
      fill(n);
      out.assign(n * e + 64, 0xAB);
      void* dst = k.inPlace ? in.data() : out.data();
      st = comm.broadcast(in.data(), dst, n, k.t, k.root);
      if (st.ok()) err = checkCopied(k.t, k.op, k.root, seed, dst, n, 0);
      if (r == k.root) err += unchanged();
      break;
    }
    case Coll::Reduce: {
      fill(n);
      out.assign(n * e + 64, 0xAB);
      void* dst = k.inPlace ? in.data() : out.data();
      st = comm.reduce(in.data(), dst, n, k.t, red, k.root);
      if (st.ok() && r == k.root) err = checkReduced(k.t, k.op, scalar, P, seed, dst, n, 0);
      if (!k.inPlace) err += unchanged();
      break;
    }
    case Coll::AllToAll: {
      fill(n * P);
      out.assign(n * P * e + 64, 0xAB);
      void* dst = k.inPlace ? in.data() : out.data();
      st = comm.allToAll(in.data(), dst, n, k.t);
      for (int q = 0; st.ok() && q < P; ++q)
        err += checkCopied(k.t, k.op, q, seed, static_cast<char*>(dst) + q * n * e, n, r * n);
      if (!k.inPlace) err += unchanged();
      break;
    }
    case Coll::Gather: {
      fill(n);
      out.assign(n * P * e + 64, 0xAB);
      st = comm.gather(in.data(), out.data(), n, k.t, k.root);
      for (int q = 0; st.ok() && r == k.root && q < P; ++q)
        err += checkCopied(k.t, k.op, q, seed, out.data() + q * n * e, n, 0);
      err += unchanged();
      break;
    }
    case Coll::Scatter: {
      fill(n * P);
      out.assign(n * e + 64, 0xAB);
      st = comm.scatter(in.data(), out.data(), n, k.t, k.root);
      if (st.ok()) err = checkCopied(k.t, k.op, k.root, seed, out.data(), n, r * n);
      err += unchanged();
      break;
    }
    case Coll::SendRecv: {
      if (P == 1) return "";
      // A ring: even ranks send first, odd ranks receive first, so bounded buffers suffice.
      fill(n);
      out.assign(n * e + 64, 0xAB);
      int right = (r + 1) % P, left = (r + P - 1) % P;
      if (r % 2 == 0) {
        st = comm.send(in.data(), n, k.t, right);
        if (st.ok()) st = comm.recv(out.data(), n, k.t, left);
      } else {
        st = comm.recv(out.data(), n, k.t, left);
        if (st.ok()) st = comm.send(in.data(), n, k.t, right);
      }
      if (st.ok()) err = checkCopied(k.t, k.op, left, seed, out.data(), n, 0) + unchanged();
      break;
    }
    case Coll::Barrier:
      st = comm.barrier();
      break;
  }
  if (!st.ok()) return "call failed: " + st.toString();
  return err;
}

int runAllCases(Communicator& comm, Coll c, void (*report)(void*, const char*), void* ctx) {
  int failures = 0;
  uint64_t seed = 1;
  for (const Case& k : casesFor(c, comm.size())) {
    std::string err = runCase(comm, c, k, seed++);
    if (!err.empty() && failures++ < 10) report(ctx, (caseName(c, k) + ": " + err).c_str());
    if (err.rfind("call failed", 0) == 0) break;  // the communicator is poisoned
  }
  return failures;
}

}  // namespace chorus::test
