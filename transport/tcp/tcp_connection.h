// One peer over TCP: the executor-side Connection plus the thread-side pumps that move its
// slots through the peer's streams. Slot k of either ring holds message k % slots:
//
//   send: executor fills slots, moves sendHead; the thread writes message m on stream m % n
//         and, once every message before it went out too, moves sendTail (the free credit).
//   recv: the thread reads message m from stream m % n into its slot and moves recvHead over
//         the messages complete in order; the executor reads them in place and moves
//         recvTail, which frees the slot for the thread.
//
// A lent message (postSend with a Completion) keeps only its header and the caller's pointer in the
// slot; the thread writes header and payload with one sendmsg. sendTail is also the lending
// receipt: every message before it is in the kernel's hands, so the caller may reuse that memory.
// A posted receive (postReceive) puts a destination in posted_[slot]; the thread, when it
// starts that message's payload, swaps in kClaimed and reads into the destination if there was
// one of the right size, else into the slot; payloadAt_[slot] says which.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/socket.h"
#include "transport/transport.h"

namespace chorus {

class TcpTransport;

class TcpConnection final : public Connection {
 public:
  TcpConnection(TcpTransport* owner, int me, int peer, int nstreams, int slots, size_t chunkBytes,
                size_t zeroCopyBytes);
  ~TcpConnection() override;

  // Executor side.
  // Lends messages of zeroCopyBytes or more (when `sent` allows): the thread writes them
  // from the caller's memory, and sendTail_ passing the ticket says it has.
  bool postSend(const WireHeader& h, MemRef data, Completion* sent) override;
  bool test(const Completion& c) const override {
    return sendTail_.load(std::memory_order_acquire) >= c.ticket;
  }
  const WireHeader* peek(const void** payload) override;
  void release() override;
  uint64_t receiveWindow() const override { return zeroCopyBytes_ ? slots_ : 0; }
  bool postReceive(uint64_t ahead, MemRef where, size_t bytes, bool streamed) override;
  void reclaimLent() override;

  // Executor side: the peer said goodbye on every stream and everything it sent has been
  // consumed, so nothing more will ever come from it.
  bool finished() const {
    return goodbyeAll_.load(std::memory_order_acquire) &&
           recvHead_.load(std::memory_order_acquire) == recvTailLocal_;
  }

  // Thread side. Each returns whether it moved bytes; a broken stream sets *err.
  bool pumpSend(int s, Status* err);
  bool pumpRecv(int s, Status* err);
  // Everything posted has been written to the sockets.
  bool flushed() const;
  // Writes a goodbye on every stream and shuts their sending side; best effort.
  void sayGoodbye();
  // Reads and drops whatever comes until each stream ends; true when all have.
  bool drainInput();
  void markReady(int s) { streams_[s].canRead = streams_[s].canWrite = true; }

  int peer() const { return peer_; }
  int nstreams() const { return int(streams_.size()); }
  Socket& socket(int s) { return streams_[s].sock; }
  bool closed(int s) const { return streams_[s].eof; }

 private:
  struct Stream {
    Socket sock;
    uint64_t nextSend = 0, sendOff = 0;    // message being written, bytes of it written
    uint64_t nextRecv = 0, recvOff = 0;    // message being read, bytes of it read
    WireHeader hdr{};                      // the header being read
    char* into = nullptr;                  // a posted destination the payload is read into
    bool placed = false;                   // the payload's destination has been chosen
    bool canRead = true, canWrite = true;  // false after EAGAIN until epoll says otherwise
    bool goodbye = false, eof = false;
  };
  char* slot(char* ring, uint64_t m) const { return ring + (m % slots_) * stride_; }
  bool haveCredit();
  ssize_t writeLent(int fd, const char* header, size_t done, Status* err);
  char* claimPosted(uint64_t m, uint32_t bytes);
  ssize_t readPosted(int fd, char* into, size_t want, Status* err);
  ssize_t reclaimedError(const char* doing, Status* err) const;
  Status streamError(int s, const char* doing, int err) const;
  void advanceSendTail();
  void advanceRecvHead();

  TcpTransport* owner_;
  int me_, peer_;
  uint64_t slots_;
  size_t chunk_, stride_;
  std::vector<Stream> streams_;
  char* sendRing_ = nullptr;
  char* recvRing_ = nullptr;
  std::unique_ptr<uint8_t[]> sent_, received_;  // per slot, thread only
  std::unique_ptr<uint8_t[]> lent_;  // per slot: its payload is a pointer (executor writes)
  std::unique_ptr<std::atomic<char*>[]> posted_;        // per slot, see above
  std::unique_ptr<std::atomic<uint32_t>[]> postBytes_;  // per slot: the posted room
  std::unique_ptr<char*[]> payloadAt_;                  // per slot (thread writes)
  size_t zeroCopyBytes_;
  std::mutex lendMu_;       // held while the thread reads lent or writes posted memory
  bool reclaimed_ = false;  // under lendMu_: lent and posted memory is the caller's again

  // Executor-owned counters and its cached view of the thread's; then the thread's own.
  alignas(64) std::atomic<uint64_t> sendHead_{0};
  std::atomic<uint64_t> recvTail_{0};
  uint64_t headLocal_ = 0, tailSeen_ = 0, recvTailLocal_ = 0, recvHeadSeen_ = 0;
  alignas(64) std::atomic<uint64_t> sendTail_{0};
  std::atomic<uint64_t> recvHead_{0};
  uint64_t sendTailLocal_ = 0, recvHeadLocal_ = 0;
  std::atomic<bool> goodbyeAll_{false};  // every stream from the peer said goodbye

  friend class TcpTransport;
};

}  // namespace chorus
