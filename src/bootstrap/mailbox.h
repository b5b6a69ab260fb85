// Where the bootstrap's service thread leaves collective messages for the calling threads,
// keyed by (source rank, sequence number). Waiters wake on arrival, on a recorded failure
// (the mailbox is poisoned and every wait fails fast with it) and on a peer's clean exit.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "bootstrap/wire.h"
#include "chorus/status.h"
#include "common/clock.h"

namespace chorus::boot {

struct Message {
  DataHeader header;
  std::vector<uint8_t> payload;
};

class Mailbox {
 public:
  explicit Mailbox(int size) : gone_(size, false) {}

  void put(Message m);
  // Waits for the message from `src` numbered `seq`. Fails with the poison status, with
  // InvalidUsage if `src` has left, or with Timeout at `deadline`.
  Status take(int src, uint64_t seq, Deadline deadline, Message* out);
  void poison(const Status& failure);
  void peerLeft(int rank);
  Status poisoned() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<int, uint64_t>, Message> box_;
  std::vector<bool> gone_;
  Status poison_;
};

}  // namespace chorus::boot
