// The transport interface: point-to-point, non-blocking message channels between two ranks.
// A message is a WireHeader plus up to maxPayloadBytes() of data. trySend copies the data out
// (so the caller may reuse its buffer at once); a transport whose own thread moves the bytes
// may also lend: trySendInPlace leaves the data in the caller's memory until the transport has
// handed it on, which saves a copy. Receiving hands out a pointer into the transport's own
// buffer so the executor can reduce straight out of it, then release() frees the slot and
// returns the credit to the sender; such a transport may instead land a payload where the
// caller asked (postReceive), saving the copy out. Nothing here blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chorus/status.h"

namespace chorus {

// Travels with every chunk. It repeats the call that produced it so that a receiver can tell
// when two ranks disagree about which collective they are in.
struct WireHeader {
  uint64_t count;  // the call's element count (OpDesc::count)
  uint32_t opSeq;  // collectives issued on this communicator before this one
  int32_t root;    // OpDesc::root
  uint32_t bytes;  // payload bytes in this message
  uint8_t coll;    // Collective
  uint8_t dtype;   // DataType
  uint8_t op;      // RedOp
  uint8_t reserved;
};

class Connection {
 public:
  virtual ~Connection() = default;
  // Posts header + h.bytes of data. Returns false (and posts nothing) if no credit is free.
  virtual bool trySend(const WireHeader& h, const void* data) = 0;
  // The oldest unreleased message, or nullptr if none has arrived yet.
  virtual const WireHeader* peek(const void** payload) = 0;
  // Frees the message returned by peek().
  virtual void release() = 0;

  // Zero copy. inPlaceFrom() is the smallest payload worth sending from, or receiving into, the
  // caller's memory (0: this connection never does). trySendInPlace posts like trySend but
  // reads `data` later, from the transport's thread: the caller must leave those bytes alone
  // until sendsDone() >= *ticket.
  virtual size_t inPlaceFrom() const { return 0; }
  virtual bool trySendInPlace(const WireHeader& h, const void* data, uint64_t* ticket) {
    (void)h, (void)data, (void)ticket;
    return false;
  }
  virtual uint64_t sendsDone() const { return 0; }
  // Asks for the payload of the message `ahead` places after the next one peek() returns
  // (ahead < receiveWindow()) to land in [where, where + bytes), if it has not begun arriving
  // and is exactly that long; false when it is too late. From the call until that message is
  // released the transport may write there; peek() then returns `where` as the payload.
  virtual uint64_t receiveWindow() const { return 0; }
  virtual bool postReceive(uint64_t ahead, void* where, size_t bytes) {
    (void)ahead, (void)where, (void)bytes;
    return false;
  }
  // After a failure, when the caller is about to give its memory back: once this returns, the
  // transport touches no lent or posted memory again, and the connection is unusable.
  virtual void reclaimLent() {}
};

// Owns the connections to the peers it serves. It rings the communicator's Doorbell
// (transport/doorbell.h), lent at creation, when something arrives for the executor.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual Connection* connection(int peer) = 0;  // nullptr if this transport does not reach peer
  virtual size_t maxPayloadBytes() const = 0;

  // Whether `peer` has sent all it ever will and this rank consumed it, once the bootstrap
  // says the peer left: a transport with data still in flight answers false until then.
  virtual bool peerFinished(int peer) const {
    (void)peer;
    return true;
  }
};

}  // namespace chorus
