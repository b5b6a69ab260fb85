#include "core/op_desc.h"

namespace chorus {

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return "allreduce";
    case Collective::ReduceScatter:
      return "reduce_scatter";
    case Collective::AllGather:
      return "allgather";
    case Collective::Broadcast:
      return "broadcast";
    case Collective::Reduce:
      return "reduce";
    case Collective::AllToAll:
      return "alltoall";
    case Collective::Gather:
      return "gather";
    case Collective::Scatter:
      return "scatter";
    case Collective::Send:
      return "send";
    case Collective::Recv:
      return "recv";
    case Collective::Barrier:
      return "barrier";
  }
  return "unknown";
}

std::string OpDesc::toString() const {
  std::string s = std::string(collectiveName(coll)) + "(count=" + std::to_string(count) + ", " +
                  dataTypeName(dtype);
  bool reduces = coll == Collective::AllReduce || coll == Collective::ReduceScatter ||
                 coll == Collective::Reduce;
  if (reduces) s += std::string(", ") + redOpName(op);
  if (root >= 0) {
    bool p2p = coll == Collective::Send || coll == Collective::Recv;
    s += (p2p ? ", peer=" : ", root=") + std::to_string(root);
  }
  return s + ")";
}

uint64_t inputElems(const OpDesc& d, int size) {
  switch (d.coll) {
    case Collective::ReduceScatter:
    case Collective::AllToAll:
    case Collective::Scatter:
      return d.count * uint64_t(size);
    default:
      return d.count;
  }
}

uint64_t outputElems(const OpDesc& d, int size) {
  switch (d.coll) {
    case Collective::AllGather:
    case Collective::AllToAll:
    case Collective::Gather:
      return d.count * uint64_t(size);
    default:
      return d.count;
  }
}

}  // namespace chorus
