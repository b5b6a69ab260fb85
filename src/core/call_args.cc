#include "core/call_args.h"

#include <cstdint>
#include <string>

namespace chorus {

namespace {

// What a collective reads and writes: elements per buffer as multiples of `count` (1, or the
// number of ranks), and whether only the root touches the buffer.
struct Shape {
  bool reduces = false;
  bool rooted = false;
  bool sendPerRank = false, recvPerRank = false;
  bool sendRootOnly = false, recvRootOnly = false;
};

Shape shapeOf(Collective c) {
  Shape s;
  switch (c) {
    case Collective::AllReduce:
      s.reduces = true;
      break;
    case Collective::ReduceScatter:
      s.reduces = s.sendPerRank = true;
      break;
    case Collective::AllGather:
      s.recvPerRank = true;
      break;
    case Collective::Broadcast:
      s.rooted = s.sendRootOnly = true;
      break;
    case Collective::Reduce:
      s.reduces = s.rooted = s.recvRootOnly = true;
      break;
    case Collective::AllToAll:
      s.sendPerRank = s.recvPerRank = true;
      break;
    case Collective::Gather:
      s.rooted = s.recvPerRank = s.recvRootOnly = true;
      break;
    case Collective::Scatter:
      s.rooted = s.sendPerRank = s.sendRootOnly = true;
      break;
    default:
      break;
  }
  return s;
}

class Checker {
 public:
  Checker(const CallArgs& a, int rank, int size) : a_(a), rank_(rank), size_(size) {}

  Status type() const {
    if (!isValidDataType(int(a_.type)))
      return bad("unknown datatype " + std::to_string(int(a_.type)));
    return Status::Ok();
  }
  Status op() const {
    if (!isValidRedOp(int(a_.red.op)))
      return bad("unknown reduction op " + std::to_string(int(a_.red.op)));
    if (a_.red.op == RedOp::PreMulSum && !a_.red.scalar)
      return bad("PreMulSum needs a scalar (Reduction{RedOp::PreMulSum, &scalar})");
    return Status::Ok();
  }
  Status peer(const char* name) const {
    if (a_.root < 0 || a_.root >= size_)
      return bad(std::string(name) + " " + std::to_string(a_.root) + " is outside [0, " +
                 std::to_string(size_) + ")");
    return Status::Ok();
  }
  // `count` elements, times the number of ranks when `perRank`, at p. Byte sizes past 2^48
  // cannot be real buffers, and count * 8 * ranks must not overflow where the library sizes
  // buffers. Multiplications checked for overflow, not divisions: six divisions a call took
  // ~200 cycles of an 8-byte allreduce.
  Status buffer(const void* p, bool perRank, const char* name) const {
    const uint64_t times = perRank ? uint64_t(size_) : 1;
    uint64_t bytes = 0, widest = 0;
    if (__builtin_mul_overflow(a_.count, dataTypeSize(a_.type) * times, &bytes) ||
        bytes > (uint64_t(1) << 48) ||
        __builtin_mul_overflow(a_.count, 8 * uint64_t(size_), &widest))
      return bad("count " + std::to_string(a_.count) + " is too large for the " + name);
    if (a_.count && !p)
      return bad(std::string(name) + " is null but count is " + std::to_string(a_.count * times));
    return Status::Ok();
  }
  Status bad(const std::string& m) const {
    return Status::InvalidArgument(std::string(collectiveName(a_.coll)) + " on rank " +
                                   std::to_string(rank_) + ": " + m);
  }

 private:
  const CallArgs& a_;
  int rank_, size_;
};

Status checkPointToPoint(const Checker& c, const CallArgs& a, int rank, bool inGroup) {
  const bool isSend = a.coll == Collective::Send;
  CHORUS_RETURN_IF_ERROR(c.type());
  CHORUS_RETURN_IF_ERROR(c.peer("peer"));
  if (a.root == rank && !inGroup)
    return c.bad(isSend ? "a send to this rank itself needs its matching recv in the same group"
                        : "a recv from this rank itself needs its matching send in the same group");
  return c.buffer(isSend ? a.send : a.recv, false, "buffer");
}

Status checkCollective(const Checker& c, const CallArgs& a, int rank) {
  const Shape s = shapeOf(a.coll);
  CHORUS_RETURN_IF_ERROR(c.type());
  if (s.reduces) CHORUS_RETURN_IF_ERROR(c.op());
  if (s.rooted) CHORUS_RETURN_IF_ERROR(c.peer("root"));
  const bool isRoot = rank == a.root;
  if (!s.sendRootOnly || isRoot)
    CHORUS_RETURN_IF_ERROR(c.buffer(a.send, s.sendPerRank, "send buffer"));
  if (!s.recvRootOnly || isRoot)
    CHORUS_RETURN_IF_ERROR(c.buffer(a.recv, s.recvPerRank, "recv buffer"));
  return Status::Ok();
}

// Whether the call works in place: the same buffer, or for allgather and reduce_scatter this
// rank's block of the larger one.
bool inPlace(const CallArgs& a, int rank) {
  const size_t block = size_t(rank) * a.count * dataTypeSize(a.type);
  switch (a.coll) {
    case Collective::ReduceScatter:
      return static_cast<const char*>(a.send) + block == a.recv;
    case Collective::AllGather:
      return static_cast<const char*>(a.recv) + block == a.send;
    case Collective::Gather:
    case Collective::Scatter:
      return false;
    default:
      return a.send == a.recv;
  }
}

}  // namespace

Status checkCall(const CallArgs& a, int rank, int size, bool inGroup, OpDesc* out) {
  Checker c(a, rank, size);
  OpDesc d;
  d.coll = a.coll;
  switch (a.coll) {
    case Collective::Barrier:
      if (inGroup)
        return Status::InvalidUsage("barrier on rank " + std::to_string(rank) +
                                    " inside a group: call it outside groupStart/groupEnd");
      d.count = 1;
      d.dtype = DataType::Uint8;
      break;
    case Collective::Send:
    case Collective::Recv:
      CHORUS_RETURN_IF_ERROR(checkPointToPoint(c, a, rank, inGroup));
      // Point-to-point travels in bytes, so grouped and single calls chunk alike.
      d.count = a.count * dataTypeSize(a.type);
      d.dtype = DataType::Uint8;
      d.root = a.root;
      break;
    default:
      CHORUS_RETURN_IF_ERROR(checkCollective(c, a, rank));
      d.count = a.count;
      d.dtype = a.type;
      d.op = shapeOf(a.coll).reduces ? a.red.op : RedOp::Sum;
      d.root = shapeOf(a.coll).rooted ? a.root : -1;
      d.inPlace = inPlace(a, rank);
      break;
  }
  *out = d;
  return Status::Ok();
}

}  // namespace chorus
