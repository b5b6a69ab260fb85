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
// Posted receives (Connection::postReceive), on providers that neither pin pages nor reorder
// writes: the receiver registers the destination and writes where it is into the sender's
// table of postings. A sender that finds the posting of the message it sends writes the
// payload there first, silently, then the header into the slot, marked: the payload is
// already in place when the header lands, and the receiver's copy out of the FIFO is saved.
// One that sends before the posting arrives uses the slot as usual.
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
  uint64_t postAddr = 0, postKey = 0;  // the peer's table of the postings this rank makes
};

// One posted receive, as the receiver writes it into the sender's table at the message's slot.
struct RdmaPosting {
  uint64_t seqPlusOne;  // the message it is for, + 1 (0: none)
  uint64_t addr, key;   // where its payload lands
  uint64_t bytes;
};

// What a posted write's context says it was, for the progress thread.
enum class RdmaWriteKind : uint64_t {
  kData = 1,
  kCredit = 2,
  kGoodbye = 3,
  kPayload = 4,
  kPosting = 5
};

// A write's context: its kind, the peer and the slot, packed.
void* writeContext(RdmaWriteKind kind, int peer, int slot);

class RdmaConnection final : public Connection {
 public:
  // `sendSlots`: the peer's FIFO for this rank; `receiveSlots`: this rank's FIFO for the peer.
  RdmaConnection(RdmaTransport* transport, int peer, int sendSlots, int receiveSlots);
  bool postSend(const WireHeader& h, MemRef data, Completion* sent) override;
  bool test(const Completion& c) const override;
  const WireHeader* peek(const void** payload) override;
  void release() override;
  uint64_t receiveWindow() const override;
  bool postReceive(uint64_t ahead, MemRef where, size_t bytes, bool streamed) override;
  void reclaimLent() override;

 private:
  friend class RdmaTransport;
  // Where a posted receive's payload lands, on the receiving side, by FIFO slot.
  struct Posted {
    uint64_t seqPlusOne = 0;
    char* where = nullptr;
    size_t bytes = 0;
    const RdmaRegion* region = nullptr;
  };
  // Progress thread: a write of message `slot` (its header, or its payload sent apart) finished
  // or failed.
  void written(int slot);
  // Progress thread: the peer's posting for the message of `slot` landed.
  bool postingLanded(uint32_t slot);
  // Counts one of a message's writes (its header, or its payload sent apart) done; the last
  // frees its memory and slot.
  void settle(int slot);
  // After a posted payload's write: the header follows it on the same lane.
  bool postHeaderAfterPayload(int lane, const RdmaGather& header, RdmaTarget fifo, int64_t imm,
                              void* context, std::string* error);
  // The destination posted for the next message, if any (release() and failures give it back).
  void dropPosting(int slot, bool revoke);

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
  std::unique_ptr<std::atomic<uint8_t>[]> pending_;  // by slot: its writes not yet finished
  std::unique_ptr<uint64_t[]> postedSeq_;            // by slot: the message it carries
  std::unique_ptr<std::atomic<const RdmaRegion*>[]> lentRegion_;  // by slot: caller memory read
  const RdmaPosting* postings_ = nullptr;                 // sending: the peer's postings, by slot
  std::unique_ptr<std::atomic<uint64_t>[]> postingSeen_;  // by slot: seqPlusOne of one landed
  // Receiving, by this rank's FIFO slot: destinations posted, the sources of their postings,
  // and whether a posting's write is still out.
  std::unique_ptr<Posted[]> posted_;
  RdmaPosting* postingSources_ = nullptr;
  std::unique_ptr<std::atomic<uint8_t>[]> postingOut_;
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
  // How many payloads were written straight into destinations their receivers posted.
  uint64_t directWrites() const { return directWrites_.load(); }

 private:
  friend class RdmaConnection;
  static constexpr size_t kHeaderBytes = 64;        // the header's part of a slot; payload after it
  static constexpr size_t kDirectMarkAt = 32;       // in the header's part: the payload was posted
  static constexpr size_t kCtrlBytes = 16;          // per peer: a credit target, a goodbye word
  static constexpr int kWritesAheadOfPostings = 8;  // per peer (postSend)
  // Per peer: a table of postings as deep as the deepest FIFO.
  static constexpr size_t kPostingBytes = sizeof(RdmaPosting) * RdmaOptions::kMaxSlots;

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
  // Credits, postings and goodbyes go on an endpoint of their own, behind no payload.
  int controlLane() const { return opts_.lanes; }
  // This rank's FIFO for the i-th of `peers_`.
  char* fifoOf(size_t i) const { return fifos_.base + i * size_t(receiveSlots_) * slotBytes(); }
  // Where the i-th of `peers_` writes its postings, and where this rank writes its own from.
  char* postingsOf(size_t i) const { return postings_.base + i * kPostingBytes; }
  char* postingSourcesOf(size_t i) const { return postingSources_.base + i * kPostingBytes; }
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
  bool copyOnly_ = true;        // the provider pins pages: never lend the caller's memory
  bool postsReceives_ = false;  // receives may be posted (see the top of this file)
  int receiveSlots_ = 0;        // per peer, in this rank's FIFOs (RdmaOptions::slotsFor)
  std::unique_ptr<RegistrationCache> cache_;

  Span fifos_, staging_, ctrl_, sources_, postings_, postingSources_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> raised_{false};
  std::atomic<bool> creditsOwed_{false};
  std::atomic<uint64_t> zeroCopyWrites_{0};
  std::atomic<uint64_t> directWrites_{0};
};

}  // namespace chorus
