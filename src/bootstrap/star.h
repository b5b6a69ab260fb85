// The Bootstrap after the rendezvous: rank 0 holds one connection to every other rank (a
// star). One service thread per Bootstrap does all reading: collective messages go to the
// mailbox, control messages (goodbye, a peer's error, a relayed failure) are acted on, and
// a connection that closes without goodbye is a dead process. Rank 0 relays every failure it
// learns of to the others, so each survivor hears of any death within one round trip.
//
// Threads: collectives are called by one thread at a time (all ranks in the same order);
// reportError and setFailureHandler from any thread. Writes to a connection are serialised by
// its mutex, because rank 0's service thread relays while callers send.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/mailbox.h"
#include "bootstrap/wire.h"
#include "common/socket.h"

namespace chorus::boot {

struct PeerLink {
  int rank = -1;
  PeerIdentity who;
  Socket sock;
  FrameReader reader;  // service thread only (and the handshake, before it starts)
  std::mutex writeMu;
  bool writeBroken = false;  // guarded by writeMu: a timed-out send may have left half a frame
  bool open = true;          // service thread only: still watched
  bool saidGoodbye = false;  // service thread only
};

class StarBootstrap final : public Bootstrap {
 public:
  StarBootstrap(int rank, int size, const uint8_t* secret, bool weakSecret,
                std::vector<std::unique_ptr<PeerLink>> peers);
  ~StarBootstrap() override;
  Status start();

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const uint8_t* secret() const override { return secret_; }
  bool weakSecret() const override { return weakSecret_; }
  SockAddr localAddress() const override;

  Status allgather(const void* mine, size_t bytes, void* all, Deadline deadline) override;
  Status broadcast(void* data, size_t bytes, int root, Deadline deadline) override;
  Status barrier(Deadline deadline) override;

  bool hasLeft(int rank) const override {
    return rank >= 0 && rank < size_ && left_[rank].load(std::memory_order_acquire);
  }
  void setFailureHandler(FailureHandler handler) override;
  Status firstFailure() override;
  void reportError(const Status& status) override;
  Status findUnresponsive() override;

 private:
  // Service thread.
  void serviceLoop();
  void serviceReadable(PeerLink& p);
  void drainFrames(PeerLink& p);
  void handleFrame(PeerLink& p, Frame& f);
  void peerClosed(PeerLink& p, const Status& why);
  void peerFailed(int rank, const Status& st);
  void relayFailure(int failedRank, const Status& st);
  void recordFailure(const Status& st);
  void markLeft(int rank);

  // Who still answers (star_probe.cc).
  void handleProbeFrame(PeerLink& p, const Frame& f);
  void takeProbeRequest();  // rank 0's own findUnresponsive, handed to the service thread
  void startProbe();
  bool probeSettled() const;
  void finishProbe();
  void publishFinding(const Status& finding);
  int pollTimeoutMs() const;

  // Collectives (star_collectives.cc).
  DataHeader nextHeader(CollOp op, int32_t arg, uint64_t bytes);
  Status gatherAtRoot(const DataHeader& h, const std::vector<int>& from, size_t eachBytes,
                      uint8_t* out, size_t stride, Deadline deadline);
  Status sendResult(const DataHeader& h, const void* data, size_t bytes, Deadline deadline);
  Status takeResult(const DataHeader& h, size_t bytes, Deadline deadline, Message* m);
  Status takeData(int src, const DataHeader& expect, size_t payloadBytes, Deadline deadline,
                  Message* m);
  void failRound(const DataHeader& h, const Status& st);
  Status sendData(int peer, const DataHeader& h, const void* data, size_t bytes, Deadline d);
  std::string callName(const DataHeader& h) const;

  Status send(int peer, uint32_t type, const void* data, size_t bytes, Deadline deadline);

  const int rank_;
  const int size_;
  uint8_t secret_[kSecretBytes];
  const bool weakSecret_;
  std::vector<std::unique_ptr<PeerLink>> peers_;  // by rank; null where there is no link
  Mailbox mailbox_;
  std::atomic<uint64_t> seq_{0};
  int wakeFd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  std::unique_ptr<std::atomic<bool>[]> left_;  // by rank: left cleanly
  std::mutex failMu_;
  Status failure_;              // guarded by failMu_: the first failure
  FailureHandler handler_;      // guarded by failMu_
  bool handlerCalled_ = false;  // guarded by failMu_

  // A probe's finding reaches the callers of findUnresponsive through these.
  std::mutex probeMu_;
  std::condition_variable probeCv_;
  bool probeWanted_ = false;  // guarded by probeMu_: rank 0's own caller asked
  uint64_t findings_ = 0;     // guarded by probeMu_: how many have come
  Status finding_;            // guarded by probeMu_: the latest
  // Rank 0's probe in flight: service thread only.
  bool probing_ = false;
  uint64_t probeId_ = 0;
  Deadline probeEnds_ = Deadline::never();
  std::vector<bool> answered_;
  std::vector<int> askers_;
};

}  // namespace chorus::boot
