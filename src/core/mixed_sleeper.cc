#include "core/mixed_sleeper.h"

#include <time.h>

namespace chorus {

Connection* MixedSleeper::connection(int peer) {
  Connection* c = tcp_ ? tcp_->connection(peer) : nullptr;
  return c ? c : shm_->connection(peer);
}

uint32_t MixedSleeper::prepareSleep() {
  // The TCP flag goes up first: from then on the thread rings the shm doorbell too, and the
  // executor's poll after prepareSleep() sees anything published before.
  uint32_t tcpToken = tcp_ ? tcp_->prepareSleep() : 0;
  return shmActive_ ? shm_->prepareSleep() : tcpToken;
}

void MixedSleeper::sleep(uint32_t token, int64_t timeoutNs) {
  if (shmActive_) {
    shm_->sleep(token, timeoutNs);
  } else if (tcp_) {
    tcp_->sleep(token, timeoutNs);
  } else {
    timespec ts{0, long(timeoutNs < 1000000 ? timeoutNs : 1000000)};
    nanosleep(&ts, nullptr);
  }
}

void MixedSleeper::endSleep() {
  if (tcp_) tcp_->endSleep();
  if (shmActive_) shm_->endSleep();
}

void MixedSleeper::wake() {
  if (tcp_) tcp_->wake();
  shm_->wake();
}

}  // namespace chorus
