// What the RDMA protocol (rdma_transport.h) needs of a network provider: memory registration,
// RDMA write with 32-bit immediate data on reliable endpoints, and a completion queue. Two
// providers implement it, each loading its library at run time: rdma-core's libibverbs
// (verbs_nic.cc: InfiniBand, RoCE v2) and libfabric (ofi_nic.cc: EFA, cxi, verbs, and the tcp
// and sockets providers that let the protocol run on machines without an RDMA NIC).
//
// Nothing here blocks except waitForEvents. write() and poll() may be called from different
// threads at once (the executor posts, the transport's progress thread polls).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chorus/status.h"

namespace chorus {

// A registered range of this process's memory.
class RdmaRegion {
 public:
  virtual ~RdmaRegion() = default;  // deregisters
  // The local descriptor a write's gather entry out of this region carries (may be null).
  virtual void* desc() const = 0;
  // What a peer needs to write into the region: its key, and the address it names for `p`
  // (the virtual address, or the offset from the start where the provider wants offsets).
  virtual uint64_t key() const = 0;
  virtual uint64_t remoteAddress(const void* p) const = 0;
};

// One piece of a write's source: `bytes` at `addr`, inside a region whose desc() is `desc`.
struct RdmaGather {
  const void* addr;
  size_t bytes;
  void* desc;
};

// Where a write lands in a peer's registered memory.
struct RdmaTarget {
  uint64_t addr;
  uint64_t key;
};

struct RdmaEvent {
  enum Kind : uint8_t {
    kWritten,  // a write this rank posted finished (the data is at the peer); `context` says which
    kArrived,  // a peer's write with immediate data `imm` landed in this rank's memory
    kFailed,   // a posted write failed: `context` says which, `error` why
  };
  Kind kind = kWritten;
  uint32_t imm = 0;
  void* context = nullptr;
  std::string error;
};

// The result of posting: done, or the provider's queue is full (try again after a poll).
enum class PostResult { kPosted, kBusy, kFailed };

class RdmaNic {
 public:
  virtual ~RdmaNic() = default;
  // "libfabric tcp;ofi_rxm on eth0", "mlx5_0:1 (RoCE v2, GID 3)": for logs and errors.
  virtual std::string describe() const = 0;
  // Whether registration pins the pages (a cached registration of freed and reused memory
  // would then send stale data), so only memory that stays put may be cached.
  virtual bool registrationPins() const = 0;
  // The most gather entries one write may carry (at least 2).
  virtual int maxGather() const = 0;

  // Registers [p, p + bytes) for writes out of it and for peers' writes into it.
  virtual Status registerMemory(void* p, size_t bytes, std::unique_ptr<RdmaRegion>* out) = 0;

  // Set-up, collective in effect: prepare() makes `lanes` reliable endpoints towards each of
  // `peers` (ranks of a job of `size`, this one `rank`) and returns a description of them for
  // everybody; the transport swaps those through the bootstrap and calls connect() for each
  // peer with the peer's description. Lane i of one rank talks to lane i of the other.
  virtual Status prepare(int rank, int size, const std::vector<int>& peers, int lanes,
                         std::vector<uint8_t>* description) = 0;
  virtual Status connect(int peer, const uint8_t* description, size_t bytes) = 0;

  // Writes the gathered source into the peer's memory at `target` with immediate data `imm`,
  // which arrives at the peer as a kArrived event once the data is in place. `context`
  // comes back with this write's kWritten or kFailed event.
  virtual PostResult write(int peer, int lane, const RdmaGather* gather, int n, RdmaTarget target,
                           uint32_t imm, void* context, std::string* error) = 0;

  // Takes up to `max` events; 0 when none is waiting.
  virtual int poll(RdmaEvent* events, int max) = 0;
  // Sleeps until poll() may have something, interruptWait() is called, or `timeoutMs` passed.
  virtual void waitForEvents(int timeoutMs) = 0;
  virtual void interruptWait() = 0;

  // Closes every endpoint (queue pair): nothing lands in or is read from registered memory
  // after it, so the regions can be released; teardown calls it before releasing them.
  // `broken`: the communicator failed (a peer dead, cut off or hung) or writes are still
  // queued; a provider may then be unable to close its endpoints cleanly.
  virtual void disconnect(bool broken) = 0;
};

// Opening a provider. `why` says what is missing when none can be opened (no library, no
// device, no port up, no provider with the needed capabilities).
struct RdmaNicOptions {
  std::string ofiProvider;     // libfabric: provider name to use ("tcp", "efa"); empty: best found
  bool ofiSoftwareOk = false;  // libfabric: tcp/sockets/udp count (they do when forced)
  std::string ifname;          // libfabric on IP providers: CHORUS_SOCKET_IFNAME's rule
  bool loopbackOk = false;     // every rank is on this host: the loopback interface will do
  std::string ibHca;           // verbs: CHORUS_IB_HCA (NCCL syntax: [^][=]mlx5_0[:1],...)
  int ibGidIndex = -1;         // verbs: RoCE GID index; -1 picks a RoCE v2 IPv4 one
  int ibTrafficClass = 0;      // verbs: RoCE traffic class
  double timeoutSec = 300;     // verbs: bounds the retries of a QP
  int localIndex = 0;          // this rank's place among its host's ranks: its rail (rails.h)
};

Status openVerbsNic(const RdmaNicOptions& options, std::unique_ptr<RdmaNic>* out);
Status openOfiNic(const RdmaNicOptions& options, std::unique_ptr<RdmaNic>* out);

}  // namespace chorus
