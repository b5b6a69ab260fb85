// A Connection played by the test: it records what the executor sends and hands out what the
// test puts in its inbox, so the test decides when a lent message is "written" by the
// transport and when a payload lands in posted memory. For the executor's own tests.
#pragma once

#include <deque>
#include <utility>
#include <vector>

#include "transport/transport.h"

namespace chorus {

// Records what the executor sends; the test plays the peer and the transport's thread.
class HeldConnection final : public Connection {
 public:
  explicit HeldConnection(size_t lendFrom) : lendFrom_(lendFrom) {}

  struct Sent {
    WireHeader h;
    const char* lentFrom;     // the caller's memory, while lent
    std::vector<char> bytes;  // what went on the wire (copied at send, or when handed on)
  };
  std::vector<Sent> sent;
  std::deque<std::pair<WireHeader, std::vector<char>>> inbox;
  uint64_t handedOn = 0;
  bool reclaimed = false;

  // Lends messages of lendFrom bytes or more (0: never), like TCP's zero copy.
  bool postSend(const WireHeader& h, MemRef data, Completion* lent) override {
    if (lent && lendFrom_ && h.bytes >= lendFrom_) {
      sent.push_back({h, data.ptr, {}});
      lent->ticket = sent.size();
      return true;
    }
    sent.push_back({h, nullptr, std::vector<char>(data.ptr, data.ptr + h.bytes)});
    if (handedOn + 1 == sent.size()) handedOn = sent.size();  // nothing lent ahead of it
    return true;
  }
  bool test(const Completion& c) const override { return handedOn >= c.ticket; }
  const WireHeader* peek(const void** payload) override {
    if (inbox.empty()) return nullptr;
    *payload = landedAt ? landedAt : inbox.front().second.data();
    return &inbox.front().first;
  }
  void release() override { inbox.pop_front(); }
  uint64_t receiveWindow() const override { return 4; }
  bool postReceive(uint64_t ahead, MemRef where, size_t bytes, bool) override {
    if (!lendFrom_ || bytes < lendFrom_) return false;
    posts.push_back({ahead, where.ptr, bytes});
    return true;
  }
  struct Post {
    uint64_t ahead;
    char* where;
    size_t bytes;
  };
  std::vector<Post> posts;
  char* landedAt = nullptr;  // the next message's payload was read into posted memory here
  void reclaimLent() override { reclaimed = true; }

  // The transport writes every lent message now: what the peer gets is the memory as it is.
  void handOnAll() {
    for (Sent& s : sent)
      if (s.lentFrom) s.bytes.assign(s.lentFrom, s.lentFrom + s.h.bytes), s.lentFrom = nullptr;
    handedOn = sent.size();
  }

 private:
  size_t lendFrom_;
};

}  // namespace chorus
