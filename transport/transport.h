// The transport interface: point-to-point, non-blocking message channels between two ranks.
// A message is a WireHeader plus up to maxPayloadBytes() of data. Transfers are posted and
// later tested: a send hands its bytes over (a copying transport finishes at once, one that
// moves them later from its own thread lends the caller's memory until its Completion tests
// finished); a receive is taken out of the transport's buffer (peek/release) or, posted ahead,
// lands where the caller asked. Buffers are memory references carrying their kind. Nothing
// here blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chorus/status.h"
#include "engine/completion.h"
#include "engine/memory.h"

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
  uint8_t kind;    // kWireData or kWireReady; values from 0x80 are a transport's own

  bool operator==(const WireHeader&) const = default;
};

// WireHeader::kind. A ready notice (no payload) tells a rank that sends to this one during a
// collective, and hears nothing else from it, that this rank is in the same call and will take
// its data (core/executor_notices.cc).
inline constexpr uint8_t kWireData = 0;
inline constexpr uint8_t kWireReady = 1;

class Connection {
 public:
  virtual ~Connection() = default;

  // Posts header + h.bytes of `data` to the peer; false (and nothing posted) while no credit
  // is free. A transport that copies takes the bytes now and leaves *sent finished. One that
  // moves them later from its own thread or device (TCP's zero copy; RDMA) may instead keep
  // reading `data` until test(*sent): the caller must not write those bytes before. A null
  // `sent` forbids that: the bytes are taken now.
  virtual bool postSend(const WireHeader& h, MemRef data, Completion* sent) = 0;
  // Whether a transfer this connection was given has finished.
  virtual bool test(const Completion& c) const { return c.finished(); }

  // The oldest unreleased message, or nullptr if none has arrived yet. The payload stays in
  // the transport's memory, so the executor can reduce straight out of it.
  virtual const WireHeader* peek(const void** payload) = 0;
  // Frees the message returned by peek() and returns its credit to the sender.
  virtual void release() = 0;
  // Posted receives: asks for the payload of the message `ahead` places after the next one
  // peek() returns (ahead < receiveWindow()) to land in [where, where + bytes), saving the
  // copy out. False when the transport declines (too small to be worth it, too late: it has
  // begun arriving, or another length); it then comes through a slot as usual. From the call
  // until that message is released the transport may write there; peek() then returns
  // `where` as the payload.
  virtual uint64_t receiveWindow() const { return 0; }
  // `streamed`: the call writes its output around the caches (ExecEnv::streamBytes), so a
  // transport whose landing would not (a kernel copy) may do better to decline.
  virtual bool postReceive(uint64_t ahead, MemRef where, size_t bytes, bool streamed) {
    (void)ahead, (void)where, (void)bytes, (void)streamed;
    return false;
  }
  // Called by a rank that waits: takes whatever peers lent this rank (a transport whose
  // receiver reads the sender's memory), so that no sender waits on this rank's steps.
  virtual void takeLent() {}
  // After a failure, when the caller is about to give its memory back: once this returns, the
  // transport touches no memory it was lent (postSend) or posted (postReceive) again, and the
  // connection is unusable.
  virtual void reclaimLent() {}

  // One-sided transfers, where this connection offers them: put writes [src, src + bytes) into
  // `remote`, a buffer the peer registered with its transport (Transport::registerMemory) and
  // handed over; get reads from one into `dst`. Neither involves the peer's executor; the
  // peer learns of a put only from a message sent after it finished (test(*done)).
  virtual bool offersOneSided() const { return false; }
  virtual Status put(MemRef src, MemRef remote, size_t bytes, Completion* done);
  virtual Status get(MemRef dst, MemRef remote, size_t bytes, Completion* done);
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
  // Describes [local, local + bytes) for this transport's peers to put into and get from
  // (Connection::put/get): a MemoryKind::Registered reference, plain data to send them. It
  // stays valid while the memory and this transport do. Fails where nothing is offered.
  virtual Status registerMemory(MemRef local, size_t bytes, MemRef* remote);
};

}  // namespace chorus
