#include "chorus/config.h"

#include "common/env.h"
#include "common/socket.h"
#include "transport/rdma/rdma_options.h"
#include "transport/registry.h"
#include "transport/tcp/tcp_transport.h"
#include "tune/algo_override.h"

namespace chorus {

namespace {

// A setting's value under its Chorus name or, when the NCCL names are read, its NCCL one.
std::optional<std::string> either(const char* chorus, const char* nccl, Config::Names names) {
  if (names == Config::Names::Chorus) return envString(chorus);
  return envFirst({chorus, nccl});
}

// An integer setting under either name (see `either`).
std::optional<int64_t> intEither(const char* chorus, const char* nccl, Config::Names names,
                                 std::string* err) {
  if (names == Config::Names::Chorus || envString(chorus)) return envInt(chorus, err);
  return envInt(nccl, err);
}

// CHORUS_NET in lower case, so that NCCL_NET's "IB" and "Socket" read as "ib" and "socket".
std::string netName(std::string v) {
  for (char& ch : v) ch = char(tolower(static_cast<unsigned char>(ch)));
  return v.empty() ? "auto" : v;
}

}  // namespace

Status Config::fromEnvironment(Config* out, Names names) {
  Config c;
  std::string err;
  if (auto v = envDouble("CHORUS_TIMEOUT", &err)) c.timeoutSec = *v;
  if (auto v = envBytes("CHORUS_SHM_SLOT_BYTES", &err)) c.shmSlotBytes = size_t(*v);
  if (auto v = envInt("CHORUS_SHM_SLOTS", &err)) c.shmSlots = int(*v);
  if (auto v = envBytes("CHORUS_SHM_LEND_BYTES", &err)) c.shmLendBytes = size_t(*v);
  if (auto v = envInt("CHORUS_SPIN_NS", &err)) c.spinNs = *v;
  if (auto v = envBytes("CHORUS_STREAM_BYTES", &err)) c.streamBytes = size_t(*v);
  if (auto v = envInt("CHORUS_CHECK_CALLS", &err)) c.checkCalls = int(*v);
  if (auto v = envString("CHORUS_HOSTID")) c.hostId = *v;
  if (auto v = either("CHORUS_TOPO_FILE", "NCCL_TOPO_FILE", names)) c.topoFile = *v;
  if (auto v = either("CHORUS_TOPO_DUMP_FILE", "NCCL_TOPO_DUMP_FILE", names)) c.topoDumpFile = *v;
  if (auto v = envString("CHORUS_TUNE_FILE")) c.tuneFile = *v;
  // NCCL_PROTO is not read: NCCL's protocols (LL, LL128, Simple) have no host equivalent.
  if (auto v = either("CHORUS_ALGO", "NCCL_ALGO", names)) c.algo = *v;
  if (names == Names::ChorusThenNccl)
    if (auto v = envString("NCCL_COMM_BLOCKING")) c.ncclCommBlocking = *v != "0";
  if (auto v = envString("CHORUS_TRANSPORT")) c.transport = v->empty() ? "auto" : *v;
  if (auto v = either("CHORUS_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", names)) c.socketIfname = *v;
  if (auto v = either("CHORUS_SOCKET_FAMILY", "NCCL_SOCKET_FAMILY", names))
    if (!parseFamily(*v, &c.socketFamily))
      return Status::InvalidArgument("configuration: socket family '" + *v +
                                     "' (CHORUS_SOCKET_FAMILY): expected 4, 6, ipv4, ipv6 or any");
  if (auto v = envInt("CHORUS_SOCKET_NSTREAMS", &err)) c.tcpStreams = int(*v);
  if (auto v = envBytes("CHORUS_TCP_CHUNK_BYTES", &err)) c.tcpChunkBytes = size_t(*v);
  if (auto v = envInt("CHORUS_TCP_SLOTS", &err)) c.tcpSlots = int(*v);
  if (auto v = envBytes("CHORUS_TCP_ZERO_COPY_BYTES", &err)) c.tcpZeroCopyBytes = size_t(*v);
  if (auto v = either("CHORUS_NET", "NCCL_NET", names)) c.net = netName(*v);
  if (auto v = envString("CHORUS_OFI_PROVIDER")) c.ofiProvider = *v;
  if (auto v = either("CHORUS_IB_HCA", "NCCL_IB_HCA", names)) c.ibHca = *v;
  if (auto v = intEither("CHORUS_IB_GID_INDEX", "NCCL_IB_GID_INDEX", names, &err))
    c.ibGidIndex = int(*v);
  if (auto v = intEither("CHORUS_IB_TC", "NCCL_IB_TC", names, &err)) c.ibTrafficClass = int(*v);
  if (auto v = intEither("CHORUS_RDMA_LANES", "NCCL_IB_QPS_PER_CONNECTION", names, &err))
    c.rdmaLanes = int(*v);
  if (auto v = envBytes("CHORUS_RDMA_CHUNK_BYTES", &err)) c.rdmaChunkBytes = size_t(*v);
  if (auto v = envInt("CHORUS_RDMA_SLOTS", &err)) c.rdmaSlots = int(*v);
  if (auto v = envBytes("CHORUS_RDMA_ZERO_COPY_BYTES", &err)) c.rdmaZeroCopyBytes = size_t(*v);
  if (!err.empty()) return Status::InvalidArgument("configuration: " + err);
  CHORUS_RETURN_IF_ERROR(c.validate());
  *out = c;
  return Status::Ok();
}

Status Config::validate() const {
  if (!(timeoutSec > 0))
    return Status::InvalidArgument("configuration: timeout must be > 0 seconds (CHORUS_TIMEOUT)");
  if (shmSlotBytes < 64 || shmSlotBytes % 64 || shmSlotBytes > (size_t(1) << 30))
    return Status::InvalidArgument(
        "configuration: shm slot size must be a multiple of 64 between 64 B and 1 GiB "
        "(CHORUS_SHM_SLOT_BYTES=" +
        std::to_string(shmSlotBytes) + ")");
  if (shmSlots < 1 || shmSlots > 1024)
    return Status::InvalidArgument("configuration: CHORUS_SHM_SLOTS must be 1..1024, not " +
                                   std::to_string(shmSlots));
  if (spinNs < 0) return Status::InvalidArgument("configuration: CHORUS_SPIN_NS must be >= 0");
  if (checkCalls < 0 || checkCalls > 2)
    return Status::InvalidArgument(
        "configuration: CHORUS_CHECK_CALLS must be 0 (off), 1 (senders wait for their "
        "receivers) or 2 (every rank agrees on every collective), not " +
        std::to_string(checkCalls));
  CHORUS_RETURN_IF_ERROR(checkTransportNames(transport).withContext("configuration"));
  CHORUS_RETURN_IF_ERROR(TcpOptions::fromConfig(*this).validate().withContext("configuration"));
  CHORUS_RETURN_IF_ERROR(RdmaOptions::fromConfig(*this).validate().withContext("configuration"));
  AlgoOverride ov;
  CHORUS_RETURN_IF_ERROR(AlgoOverride::parse(algo, &ov).withContext("configuration"));
  return Status::Ok();
}

}  // namespace chorus
