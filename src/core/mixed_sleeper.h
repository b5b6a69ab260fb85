// The executor's view of a rank whose peers are split between shared memory and TCP: one
// Transport that hands out either kind of connection and sleeps for both. It sleeps on the shm
// doorbell (the futex peers on this host ring); the TCP progress thread, when it has news for
// a sleeping executor, rings that same doorbell through its wakeExecutor hook. With no shm
// peers it sleeps on the TCP transport's own doorbell.
#pragma once

#include <memory>

#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

class MixedSleeper final : public Transport {
 public:
  // `tcp` may be null (this rank has no TCP peers); `payload` is the job-wide chunk size.
  MixedSleeper(ShmTransport* shm, TcpTransport* tcp, size_t payload, bool shmActive)
      : shm_(shm), tcp_(tcp), payload_(payload), shmActive_(shmActive) {}

  const char* name() const override { return shmActive_ ? (tcp_ ? "shm+tcp" : "shm") : "tcp"; }
  Connection* connection(int peer) override;
  size_t maxPayloadBytes() const override { return payload_; }
  uint32_t prepareSleep() override;
  void sleep(uint32_t token, int64_t timeoutNs) override;
  void endSleep() override;
  void wake() override;

 private:
  ShmTransport* shm_;
  TcpTransport* tcp_;
  size_t payload_;
  bool shmActive_;
};

// A communicator's network transports (Communicator::Impl::net); destroyed (TCP drained and
// joined) in ~Impl before shm goes away.
struct NetTransports {
  std::unique_ptr<TcpTransport> tcp;
  std::unique_ptr<MixedSleeper> sleeper;
};

}  // namespace chorus
