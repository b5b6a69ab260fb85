// TCP transport: ranks on different hosts talk over non-blocking sockets, several streams per
// peer. Messages are striped round-robin over the streams (message k goes on stream k % n), so
// both sides know which stream carries which message and no reordering state is needed.
//
// One progress thread per transport runs an epoll loop over every stream socket, the listener
// (which stays open to refuse strangers) and an eventfd the executor kicks. The executor and
// the thread share, per peer, a ring of send slots and a ring of receive slots (single
// producer, single consumer each); the kernel's TCP window is the flow control between hosts,
// the rings bound what a rank buffers. Nothing the executor calls makes a syscall unless the
// thread sleeps.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "chorus/config.h"
#include "common/accept_backoff.h"
#include "common/socket.h"
#include "common/warn_limiter.h"
#include "transport/doorbell.h"
#include "transport/tcp/handshake.h"
#include "transport/transport.h"

namespace chorus {

// The transport's settings, taken from the communicator's Config (whose fields say more).
struct TcpOptions {
  std::string ifname;             // CHORUS_SOCKET_IFNAME (prefix, =exact, ^exclusion)
  int family = AF_UNSPEC;         // CHORUS_SOCKET_FAMILY: 4 / 6 / any
  int nstreams = 2;               // CHORUS_SOCKET_NSTREAMS: sockets per peer, 1..16
  size_t chunkBytes = 512 << 10;  // CHORUS_TCP_CHUNK_BYTES: largest message
  int slots = 16;                 // CHORUS_TCP_SLOTS: messages buffered per peer and direction
  // CHORUS_TCP_ZERO_COPY_BYTES: messages of this many payload bytes or more are sent straight
  // from the caller's buffer, not copied into a slot first; 0 copies every message.
  size_t zeroCopyBytes = 32 << 10;
  double timeoutSec = 300;  // the communicator's timeout: connect, drain, TCP_USER_TIMEOUT
  int localIndex = 0;       // this rank's place among its host's ranks: its rail (rails.h)

  static TcpOptions fromConfig(const Config& config);
  Status validate() const;
};

// How the transport reports to, and wakes, its communicator.
struct TcpHooks {
  std::function<void(const Status&)> onError;  // first connection failure, from the thread
  Doorbell* doorbell = nullptr;                // rung when the executor has news; required
  const std::atomic<bool>* failed = nullptr;   // set: do not wait to flush at shutdown
};

class TcpConnection;
struct TcpHello;

class TcpTransport final : public Transport {
 public:
  // Collective over all ranks of `bs`. `reach[q]` says whether this rank talks to q over TCP
  // (symmetric across ranks). `loopbackOk`: every rank is on this host, so 127.0.0.1 will do.
  static Status create(Bootstrap* bs, const std::vector<bool>& reach, bool loopbackOk,
                       const TcpOptions& opts, TcpHooks hooks, Deadline deadline,
                       std::unique_ptr<TcpTransport>* out);
  ~TcpTransport() override;  // flushes what was posted (unless failed), says goodbye, joins
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  const char* name() const override { return "tcp"; }
  Connection* connection(int peer) override;
  size_t maxPayloadBytes() const override { return opts_.chunkBytes; }
  // True when `peer` is not reached over TCP, or it said goodbye on every stream and all it
  // sent has been consumed. Executor thread only.
  bool peerFinished(int peer) const override;
  const SockAddr& listenAddress() const { return listenAddr_; }
  // Connections refused since start (strangers, bad handshakes); for tests and logs.
  int refusedCount() const { return refused_.load(); }

  // Called by connections on the executor's side after publishing work for the thread.
  void kickThread();
  // Called by the thread after publishing work for the executor.
  void notifyExecutor();

 private:
  struct Pending;
  TcpTransport() = default;
  // `weakSecret` (Bootstrap::weakSecret): only a loopback address will do.
  Status listen(bool loopbackOk, bool weakSecret);
  Status connectAll(const std::vector<SockAddr>& addrs, Deadline deadline);
  Status acceptAll(Deadline deadline);
  Status confirmAll(const std::vector<SockAddr>& addrs, Deadline deadline);
  bool checkHello(const TcpHello& h, const SockAddr& from, std::string* why) const;
  void refuse(const SockAddr& from, const std::string& why);
  bool readPending(Pending& p, bool setupOver);
  bool readProof(Pending& p);
  bool fillRecord(Pending& p, void* record, size_t size, size_t* got, const char* closedWhy,
                  bool* gone);
  size_t pendingFrom(const SockAddr& from) const;
  void acceptWaiting(bool setupOver);
  // Accept ran out of descriptors: stop watching the listener for a while (AcceptBackoff).
  void restListener(bool setupOver);
  // The progress thread: watch the listener again once its rest is over.
  void wakeListenerIfRested();
  Status startThread();
  void threadMain();
  bool progressAll();
  void handleListener();
  void handlePending(uint32_t id);
  void expirePending();
  void drain();
  void raise(const Status& st);

  TcpOptions opts_;
  TcpHooks hooks_;
  int rank_ = 0;
  int size_ = 0;
  uint8_t secret_[kSecretBytes] = {};
  std::vector<bool> reach_;
  Socket listener_;
  SockAddr listenAddr_;
  std::string ifName_;
  std::vector<std::unique_ptr<TcpConnection>> conns_;  // by rank; null where not reached
  std::vector<std::unique_ptr<Pending>> pending_;      // accepted, handshake not yet read
  std::vector<TcpHello> sentHellos_;  // set-up: by peer * nstreams + stream, for the proofs
  uint32_t nextPendingId_ = 0;
  AcceptBackoff acceptBackoff_;
  bool listenerResting_ = false;  // progress thread: the listener is out of the epoll set
  WarnLimiter refusals_;
  WarnLimiter acceptFailures_;

  Socket epoll_, kick_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> raised_{false};
  std::atomic<int> refused_{0};
  alignas(64) std::atomic<uint32_t> threadSleeping_{0};
};

}  // namespace chorus
