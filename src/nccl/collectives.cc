// The collective and point-to-point entry points. The face checks only what is NCCL's own (a
// live communicator, the stream, the C enums turned into the core's types, custom ops) and
// hands the call to the core's Communicator, which checks the rest once for both faces and
// runs the call now or, inside a group, queues it for ncclGroupEnd.
#include "chorus/group.h"
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

// The core's answer. A call the core queued in the open group also has its communicator
// remembered, so that ncclGroupEnd holds it while the group runs.
Status handedOver(const CommRef& c, Status st) {
  if (st.ok() && chorus::groupDepth() > 0) noteGroupComm(c.get());
  return st;
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
    return handedOver(c, c->core->allReduce(sendbuff, recvbuff, count, t, r.reduction()));
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
    return handedOver(c, c->core->reduceScatter(sendbuff, recvbuff, recvcount, t, r.reduction()));
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
    return handedOver(c, c->core->allGather(sendbuff, recvbuff, sendcount, t));
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
    return handedOver(c, c->core->broadcast(sendbuff, recvbuff, count, t, root));
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
    return handedOver(c, c->core->reduce(sendbuff, recvbuff, count, t, r.reduction(), root));
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
    return handedOver(c, c->core->allToAll(sendbuff, recvbuff, count, t));
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
    return handedOver(c, c->core->gather(sendbuff, recvbuff, count, t, root));
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
    return handedOver(c, c->core->scatter(sendbuff, recvbuff, count, t, root));
  });
}
NCCL_WEAK_ALIAS(ncclScatter);

extern "C" ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                  int peer, ncclComm_t comm, cudaStream_t stream) {
  return guard("ncclSend", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    return handedOver(c, c->core->send(sendbuff, count, t, peer));
  });
}
NCCL_WEAK_ALIAS(ncclSend);

extern "C" ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                  ncclComm_t comm, cudaStream_t stream) {
  return guard("ncclRecv", [&]() -> Status {
    CommRef c;
    DataType t;
    CHORUS_RETURN_IF_ERROR(begin(comm, stream, datatype, &c, &t));
    return handedOver(c, c->core->recv(recvbuff, count, t, peer));
  });
}
NCCL_WEAK_ALIAS(ncclRecv);
