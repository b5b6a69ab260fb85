// Per-communicator settings. Read from the environment once, when a communicator is made
// (Config::fromEnvironment), or filled in by the caller; never consulted as process globals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "chorus/status.h"

namespace chorus {

struct Config {
  double timeoutSec = 300;          // CHORUS_TIMEOUT: bound on every wait, init included
  size_t shmSlotBytes = 128 << 10;  // CHORUS_SHM_SLOT_BYTES: message (chunk) size on shm
  int shmSlots = 8;                 // CHORUS_SHM_SLOTS: messages in flight per pair
  // CHORUS_SHM_LEND_BYTES: allgathers whose blocks are this large or larger are read by the
  // receiver straight from the sender's buffer (cross-memory attach), not copied through a
  // slot; 0: never, nor payloads in memory from allocateShared (which are lent from 16 KiB).
  size_t shmLendBytes = 512 << 10;
  int64_t spinNs = 50000;  // CHORUS_SPIN_NS: busy-wait before sleeping
  // CHORUS_STREAM_BYTES: a call that touches at least this many bytes of the caller's buffers
  // (input plus output) writes its output with non-temporal stores, around the caches (0:
  // never). About the last-level cache's size.
  size_t streamBytes = 32 << 20;
  std::string hostId;        // CHORUS_HOSTID: overrides hostname + boot id
  std::string topoFile;      // CHORUS_TOPO_FILE: load the topology instead of discovering
  std::string topoDumpFile;  // CHORUS_TOPO_DUMP_FILE: rank 0 writes the job topology here
  std::string tuneFile;      // CHORUS_TUNE_FILE: link estimates measured by chorus-tune
  std::string algo;          // CHORUS_ALGO: force algorithms, "allreduce=ring,allgather=bruck"
  // CHORUS_CHECK_CALLS, the same on every rank (docs/architecture.md):
  //  1: a rank that only sends to a peer in a collective waits for the peer's word that it is
  //     in the same call before returning; a rank none of whose partners differs may still
  //     finish a mismatched call (its next call fails).
  //  2: besides, the ranks agree on every collective before any data moves (an allgather of
  //     what each was asked): every rank returns InvalidUsage from a mismatched call, and the
  //     communicator stays usable. About one small allgather more per call.
  //  0: neither; rooted collectives of a few KiB or less run up to twice as fast, and a
  //     broadcast root or reduce leaf may return before a mismatch is found.
  int checkCalls = 1;
  // NCCL_COMM_BLOCKING, read for the NCCL face only: whether its communicators block when the
  // caller's ncclConfig_t leaves `blocking` undefined. The C++ API always blocks.
  bool ncclCommBlocking = true;

  // Transports. CHORUS_TRANSPORT: "auto" lets every pair of ranks take the highest-priority
  // transport that reaches it (shm within a host, tcp between hosts); a comma-separated list
  // of names ("tcp") allows only those.
  std::string transport = "auto";
  std::string socketIfname;            // CHORUS_SOCKET_IFNAME: `eth`, `=eth0`, `^lo,docker`
  int socketFamily = 0;                // CHORUS_SOCKET_FAMILY: 4, 6 or any (AF_INET/6/UNSPEC)
  int tcpStreams = 2;                  // CHORUS_SOCKET_NSTREAMS: sockets per peer, 1..16
  size_t tcpChunkBytes = 512 << 10;    // CHORUS_TCP_CHUNK_BYTES: largest message over TCP
  int tcpSlots = 16;                   // CHORUS_TCP_SLOTS: messages buffered per peer and way
  size_t tcpZeroCopyBytes = 32 << 10;  // CHORUS_TCP_ZERO_COPY_BYTES: sent from the caller's
                                       // buffer from this size on; 0 copies every message

  // RDMA between ranks (transport/rdma). CHORUS_NET: "auto" takes an RDMA device where both
  // ranks of a pair can open one (InfiniBand/RoCE verbs first, then libfabric's hardware
  // providers) and TCP otherwise; "ib", "ofi" or "socket" force one, and a rank that cannot
  // open it fails init saying what is missing. libfabric's tcp and sockets providers are used
  // only when forced (CHORUS_NET=ofi), since the TCP transport serves plain networks better.
  std::string net = "auto";             // CHORUS_NET (NCCL_NET: IB, Socket)
  std::string ofiProvider;              // CHORUS_OFI_PROVIDER: a libfabric provider (tcp, efa)
  std::string ibHca;                    // CHORUS_IB_HCA: NCCL syntax, [^][=]mlx5_0[:1],...
  int ibGidIndex = -1;                  // CHORUS_IB_GID_INDEX: RoCE GID; -1 picks RoCE v2 IPv4
  int ibTrafficClass = 0;               // CHORUS_IB_TC: RoCE traffic class
  int rdmaLanes = 2;                    // CHORUS_RDMA_LANES: queue pairs per peer, 1..16
  size_t rdmaChunkBytes = 512 << 10;    // CHORUS_RDMA_CHUNK_BYTES: largest message
  int rdmaSlots = 0;                    // CHORUS_RDMA_SLOTS: messages in flight from each peer;
                                        // 0: 16-64 by peer count (RdmaOptions::slotsFor)
  size_t rdmaZeroCopyBytes = 64 << 10;  // CHORUS_RDMA_ZERO_COPY_BYTES: written straight from the
                                        // caller's buffer from this size on; 0 copies all

  // Which variables fromEnvironment reads. The NCCL face adds, after each CHORUS_* name, the
  // NCCL_* one that means the same (NCCL_ALGO, NCCL_TOPO_FILE, ...), so NCCL programs keep
  // their settings; Chorus's name wins when both are set.
  enum class Names { Chorus, ChorusThenNccl };

  // Starts from the defaults above and applies whatever variables are set. A malformed value
  // is an InvalidArgument naming the variable.
  static Status fromEnvironment(Config* out, Names names = Names::Chorus);
  Status validate() const;
};

}  // namespace chorus
