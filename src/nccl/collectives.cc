// The collective and point-to-point entry points: check the arguments in NCCL's terms, then
// hand one call to the core, now or (inside a group) at ncclGroupEnd.
#include "nccl/api.h"
#include "nccl/args.h"
#include "nccl/errors.h"
#include "nccl/group.h"

using namespace chorus;
using namespace chorus::nccl;

namespace {

// The checks every call starts with: a live, ready communicator, a usable stream, a known type.
Status begin(ncclComm_t comm, cudaStream_t stream, const ncclDataType_t& type, CommRef* c,
             DataType* dt) {
  CHORUS_RETURN_IF_ERROR(acquireReady(comm, c));
  Placement where;
  CHORUS_RETURN_IF_ERROR(checkPlacement(stream, &where));
  return checkType(rawValue(type), dt);
}

// The call as the core sees it (its counts, its root or peer), for ncclGroupSimulateEnd.
OpDesc call(Collective k, size_t count, DataType t, int root = -1, RedOp op = RedOp::Sum) {
  OpDesc d;
  d.coll = k;
  d.count = count;
  d.dtype = t;
  d.root = root;
  d.op = op;
  return d;
}

}  // namespace

extern "C" ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                       cudaStream_t stream) {
  return guard("ncclAllReduce", [&]() -> Status {
    CommRef c;
    DataType t;
    ResolvedOp r;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(c->redops.resolve(rawValue(op), t, &r));
    CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, count, 1, t, "sendbuff"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, count, 1, t, "recvbuff"));
    return issue(c, call(Collective::AllReduce, count, t, -1, r.reduction().op),
                 [=](Communicator& core) {
                   return core.allReduce(sendbuff, recvbuff, count, t, r.reduction());
                 });
  });
}
NCCL_WEAK_ALIAS(ncclAllReduce);

extern "C" ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                           cudaStream_t stream) {
  return guard("ncclReduceScatter", [&]() -> Status {
    CommRef c;
    DataType t;
    ResolvedOp r;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(c->redops.resolve(rawValue(op), t, &r));
    CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, recvcount, c->nranks, t, "sendbuff"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, recvcount, 1, t, "recvbuff"));
    OpDesc h = call(Collective::ReduceScatter, recvcount, t, -1, r.reduction().op);
    return issue(c, h, [=](Communicator& core) {
      return core.reduceScatter(sendbuff, recvbuff, recvcount, t, r.reduction());
    });
  });
}
NCCL_WEAK_ALIAS(ncclReduceScatter);

extern "C" ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                       ncclDataType_t datatype, ncclComm_t comm,
                                       cudaStream_t stream) {
  return guard("ncclAllGather", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, sendcount, 1, t, "sendbuff"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, sendcount, c->nranks, t, "recvbuff"));
    OpDesc h = call(Collective::AllGather, sendcount, t);
    return issue(
        c, h, [=](Communicator& core) { return core.allGather(sendbuff, recvbuff, sendcount, t); });
  });
}
NCCL_WEAK_ALIAS(ncclAllGather);

namespace {
// Shared by ncclBroadcast and ncclBcast; the type by reference, so that ncclBcast forwarding
// an out-of-range value does not read it as the enum.
ncclResult_t broadcast(const void* sendbuff, void* recvbuff, size_t count,
                       const ncclDataType_t& datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return guard("ncclBroadcast", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(checkRank(*c, root, "root"));
    // Only the root reads sendbuff.
    if (c->rank == root) CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, count, 1, t, "sendbuff"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, count, 1, t, "recvbuff"));
    return issue(c, call(Collective::Broadcast, count, t, root), [=](Communicator& core) {
      return core.broadcast(sendbuff, recvbuff, count, t, root);
    });
  });
}
}  // namespace

extern "C" ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  return broadcast(sendbuff, recvbuff, count, datatype, root, comm, stream);
}
NCCL_WEAK_ALIAS(ncclBroadcast);

extern "C" ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                   ncclComm_t comm, cudaStream_t stream) {
  return broadcast(buff, buff, count, datatype, root, comm, stream);
}
NCCL_WEAK_ALIAS(ncclBcast);

extern "C" ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclRedOp_t op, int root,
                                    ncclComm_t comm, cudaStream_t stream) {
  return guard("ncclReduce", [&]() -> Status {
    CommRef c;
    DataType t;
    ResolvedOp r;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(c->redops.resolve(rawValue(op), t, &r));
    CHORUS_RETURN_IF_ERROR(checkRank(*c, root, "root"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, count, 1, t, "sendbuff"));
    // recvbuff may be NULL everywhere but on the root.
    if (c->rank == root) CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, count, 1, t, "recvbuff"));
    return issue(c, call(Collective::Reduce, count, t, root, r.reduction().op),
                 [=](Communicator& core) {
                   return core.reduce(sendbuff, recvbuff, count, t, r.reduction(), root);
                 });
  });
}
NCCL_WEAK_ALIAS(ncclReduce);

extern "C" ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, ncclComm_t comm,
                                      cudaStream_t stream) {
  return guard("ncclAlltoAll", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, count, c->nranks, t, "sendbuff"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, count, c->nranks, t, "recvbuff"));
    OpDesc h = call(Collective::AllToAll, count, t);
    return issue(c, h,
                 [=](Communicator& core) { return core.allToAll(sendbuff, recvbuff, count, t); });
  });
}
NCCL_WEAK_ALIAS(ncclAlltoAll);

extern "C" ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                    ncclDataType_t datatype, int root, ncclComm_t comm,
                                    cudaStream_t stream) {
  return guard("ncclGather", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(checkRank(*c, root, "root"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, count, 1, t, "sendbuff"));
    if (c->rank == root)
      CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, count, c->nranks, t, "recvbuff"));
    OpDesc h = call(Collective::Gather, count, t, root);
    return issue(
        c, h, [=](Communicator& core) { return core.gather(sendbuff, recvbuff, count, t, root); });
  });
}
NCCL_WEAK_ALIAS(ncclGather);

extern "C" ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                     ncclDataType_t datatype, int root, ncclComm_t comm,
                                     cudaStream_t stream) {
  return guard("ncclScatter", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(checkRank(*c, root, "root"));
    if (c->rank == root)
      CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, count, c->nranks, t, "sendbuff"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, count, 1, t, "recvbuff"));
    OpDesc h = call(Collective::Scatter, count, t, root);
    return issue(
        c, h, [=](Communicator& core) { return core.scatter(sendbuff, recvbuff, count, t, root); });
  });
}
NCCL_WEAK_ALIAS(ncclScatter);

extern "C" ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                  int peer, ncclComm_t comm, cudaStream_t stream) {
  return guard("ncclSend", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(checkRank(*c, peer, "peer"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(sendbuff, count, 1, t, "sendbuff"));
    return issue(c, call(Collective::Send, count, t, peer),
                 [=](Communicator& core) { return core.send(sendbuff, count, t, peer); });
  });
}
NCCL_WEAK_ALIAS(ncclSend);

extern "C" ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                  ncclComm_t comm, cudaStream_t stream) {
  return guard("ncclRecv", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    CHORUS_RETURN_IF_ERROR(checkRank(*c, peer, "peer"));
    CHORUS_RETURN_IF_ERROR(checkBuffer(recvbuff, count, 1, t, "recvbuff"));
    return issue(c, call(Collective::Recv, count, t, peer),
                 [=](Communicator& core) { return core.recv(recvbuff, count, t, peer); });
  });
}
NCCL_WEAK_ALIAS(ncclRecv);
