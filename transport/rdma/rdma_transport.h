// RDMA transport: one protocol over reliable endpoints, whatever the provider (rdma_nic.h).
//
// Each rank registers, per peer, a FIFO of message slots the peer writes into, and a staging
// ring it writes out of. A message is one RDMA write with immediate data into the peer's next
// slot: the 64-byte header slot then the payload, gathered from the staging ring (the header,
// and the payload when it is small or must be copied) and, for large payloads on providers
// that do not pin pages, straight from the caller's buffer through the registration cache.
// Messages go round-robin over the lanes (several endpoints per peer, like TCP's streams).
// Credits and goodbyes are small writes whose immediate data carries them (rdma_window.h).
//
// A progress thread polls the completion queue, marks what landed and what was written, and
// rings the communicator's doorbell; the executor posts writes itself and never waits.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transport/doorbell.h"
#include "transport/rdma/rdma_nic.h"
#include "transport/rdma/rdma_options.h"
#include "transport/rdma/rdma_window.h"
#include "transport/rdma/registration_cache.h"
#include "transport/transport.h"

namespace chorus {

struct RdmaHooks {
  std::function<void(const Status&)> onError;  // the first failure, from any thread
  Doorbell* doorbell = nullptr;                // rung when the executor has news; required
  const std::atomic<bool>* failed = nullptr;   // set: do not wait to flush at shutdown
};

class RdmaTransport;

// Where this rank writes in a peer's memory.
struct RdmaRemote {
  uint64_t fifoAddr = 0, fifoKey = 0;  // the peer's FIFO for this rank, slot 0
  uint64_t ctrlAddr = 0, ctrlKey = 0;  // the peer's control words for this rank
  uint64_t slots = 0;                  // that FIFO's slots: the peer chose them
};

class RdmaConnection final : public Connection {
 public:
  // `sendSlots`: the peer's FIFO for this rank; `receiveSlots`: this rank's FIFO for the peer.
  RdmaConnection(RdmaTransport* transport, int peer, int sendSlots, int receiveSlots);
  bool postSend(const WireHeader& h, MemRef data, Completion* sent) override;
  bool test(const Completion& c) const override;
  const WireHeader* peek(const void** payload) override;
  void release() override;
  void reclaimLent() override;

 private:
  friend class RdmaTransport;
  // Progress thread: a write this connection posted finished (or failed).
  void written(int slot);

  RdmaTransport* t_;
  const int peer_;
  const int slots_;  // sending: the peer's FIFO slots, by which the arrays below go
  RdmaRemote remote_;
  char* fifo_ = nullptr;     // this rank's FIFO for the peer's messages
  char* staging_ = nullptr;  // this rank's ring of outgoing headers and copied payloads
  SendWindow send_;
  ReceiveWindow receive_;
  std::unique_ptr<std::atomic<int64_t>[]> doneSeq_;  // by slot: the last message written
  std::unique_ptr<std::atomic<uint8_t>[]> busy_;     // by slot: a write out of it is posted
  std::unique_ptr<uint64_t[]> postedSeq_;            // by slot: the message it carries
  std::unique_ptr<std::atomic<const RdmaRegion*>[]> lentRegion_;  // by slot: caller memory read
  std::atomic<int> inFlight_{0};  // writes posted and not yet finished
  std::atomic<bool> goodbyeSeen_{false};
  std::atomic<uint64_t> goodbyeTotal_{0};
};

class RdmaTransport final : public Transport {
 public:
  // Collective over all ranks of `bs`: each swaps its endpoints and buffers through it.
  // `reach[q]`: this rank talks to q over this transport (symmetric). `nic` is null on a rank
  // that reaches nobody.
  static Status create(Bootstrap* bs, const std::vector<bool>& reach, std::unique_ptr<RdmaNic> nic,
                       const char* name, const RdmaOptions& opts, RdmaHooks hooks,
                       Deadline deadline, std::unique_ptr<RdmaTransport>* out);
  ~RdmaTransport() override;  // waits for posted writes (unless failed), says goodbye, joins
  RdmaTransport(const RdmaTransport&) = delete;
  RdmaTransport& operator=(const RdmaTransport&) = delete;

  const char* name() const override { return name_; }
  Connection* connection(int peer) override;
  size_t maxPayloadBytes() const override { return opts_.chunkBytes; }
  bool peerFinished(int peer) const override;
  // How many writes were sent straight from cached registrations of the callers' buffers.
  uint64_t zeroCopyWrites() const { return zeroCopyWrites_.load(); }

 private:
  friend class RdmaConnection;
  static constexpr size_t kHeaderBytes = 64;  // the header's part of a slot; payload after it
  static constexpr size_t kCtrlBytes = 16;    // per peer: a credit target, a goodbye word

  // Registered memory: FIFOs and staging rings (one span each, per peer in `peers_` order),
  // control words (kCtrlBytes per rank) and the sources of control writes.
  struct Span {
    char* base = nullptr;
    size_t bytes = 0;
    std::unique_ptr<RdmaRegion> region;
  };

  RdmaTransport() = default;
  Status allocate();
  // Publishes this rank's FIFOs and endpoints, connects to the peers' and learns theirs.
  Status exchange(Bootstrap* bs, Deadline deadline, std::vector<RdmaRemote>* remotes);
  // Staging rings as deep as each peer's FIFO, and the connections.
  Status connectPeers(const std::vector<RdmaRemote>& remotes);
  Status allocateSpan(Span* s, size_t bytes, const char* what);
  size_t slotBytes() const { return kHeaderBytes + opts_.chunkBytes; }
  // This rank's FIFO for the i-th of `peers_`.
  char* fifoOf(size_t i) const { return fifos_.base + i * size_t(receiveSlots_) * slotBytes(); }
  void threadMain();
  bool writesInFlight() const;  // any data or control write posted and not yet finished
  void handle(const RdmaEvent& e);
  void flushCredits(RdmaConnection& c);
  void sayGoodbye();
  void waitForWrites(double seconds);
  void raise(const Status& st);
  // Posts a write, napping while the provider's queue is full; for control writes only.
  bool postControl(int peer, const RdmaGather& g, RdmaTarget target, uint32_t imm, void* ctx);

  const char* name_ = "rdma";
  RdmaOptions opts_;
  RdmaHooks hooks_;
  int rank_ = 0, size_ = 0;
  std::unique_ptr<RdmaNic> nic_;
  std::vector<std::unique_ptr<RdmaConnection>> conns_;  // by rank; null where not reached
  std::vector<int> peers_;
  bool copyOnly_ = true;  // the provider pins pages: never lend the caller's memory
  int receiveSlots_ = 0;  // per peer, in this rank's FIFOs (RdmaOptions::slotsFor)
  std::unique_ptr<RegistrationCache> cache_;

  Span fifos_, staging_, ctrl_, sources_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> raised_{false};
  std::atomic<bool> creditsOwed_{false};
  std::atomic<uint64_t> zeroCopyWrites_{0};
};

}  // namespace chorus
