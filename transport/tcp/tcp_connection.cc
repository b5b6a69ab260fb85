#include "transport/tcp/tcp_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "transport/tcp/handshake.h"
#include "transport/tcp/handshake_check.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

namespace {
constexpr size_t kHdr = sizeof(WireHeader);
// The header sits right before the 64-byte aligned payload, so header and payload leave (and
// arrive) as one contiguous run of bytes: one send() per message, not two.
constexpr size_t kHeaderAt = 64 - kHdr;
static_assert(kHdr <= 64, "WireHeader must fit before the payload's cache line");

char* allocRing(size_t bytes) {
  void* p = aligned_alloc(64, (bytes + 63) & ~size_t(63));
  if (!p) abort();  // a few MiB at set-up; nothing sensible to do without them
  return static_cast<char*>(p);
}

bool wouldBlock(int e) {
  return e == EAGAIN || e == EWOULDBLOCK;
}
}  // namespace

TcpConnection::TcpConnection(TcpTransport* owner, int me, int peer, int nstreams, int slots,
                             size_t chunkBytes, size_t zeroCopyBytes)
    : owner_(owner),
      me_(me),
      peer_(peer),
      slots_(uint64_t(slots)),
      chunk_(chunkBytes),
      stride_(64 + ((chunkBytes + 63) & ~size_t(63))),
      streams_(size_t(nstreams)),
      zeroCopyBytes_(zeroCopyBytes) {
  sendRing_ = allocRing(slots_ * stride_);
  recvRing_ = allocRing(slots_ * stride_);
  sent_.reset(new uint8_t[slots_]());
  received_.reset(new uint8_t[slots_]());
  lent_.reset(new uint8_t[slots_]());
  posted_.reset(new std::atomic<char*>[slots_]);
  postBytes_.reset(new std::atomic<uint32_t>[slots_]);
  payloadAt_.reset(new char*[slots_]());
  for (uint64_t k = 0; k < slots_; ++k) {
    posted_[k].store(nullptr, std::memory_order_relaxed);
    postBytes_[k].store(0, std::memory_order_relaxed);
  }
  for (int s = 0; s < nstreams; ++s) streams_[s].nextSend = streams_[s].nextRecv = uint64_t(s);
}

TcpConnection::~TcpConnection() {
  free(sendRing_);
  free(recvRing_);
}

// ---- executor side ----

bool TcpConnection::haveCredit() {
  if (headLocal_ - tailSeen_ < slots_) return true;
  tailSeen_ = sendTail_.load(std::memory_order_acquire);
  return headLocal_ - tailSeen_ < slots_;
}

bool TcpConnection::postSend(const WireHeader& h, MemRef data, Completion* sent) {
  if (!haveCredit()) return false;
  char* base = slot(sendRing_, headLocal_) + kHeaderAt;
  memcpy(base, &h, kHdr);
  const bool lend = sent && zeroCopyBytes_ && h.bytes >= zeroCopyBytes_;
  if (lend)
    memcpy(base + kHdr, &data.ptr, sizeof data.ptr);
  else if (h.bytes)
    memcpy(base + kHdr, data.ptr, h.bytes);
  lent_[headLocal_ % slots_] = lend;
  sendHead_.store(++headLocal_, std::memory_order_release);
  if (lend) sent->ticket = headLocal_;  // sendTail passes it once this message is written
  owner_->kickThread();
  return true;
}

bool TcpConnection::postReceive(uint64_t ahead, MemRef where, size_t bytes, bool) {
  if (ahead >= slots_ || bytes > chunk_ || bytes < zeroCopyBytes_) return false;
  const uint64_t k = (recvTailLocal_ + ahead) % slots_;
  postBytes_[k].store(uint32_t(bytes), std::memory_order_relaxed);
  char* none = nullptr;
  return posted_[k].compare_exchange_strong(none, where.ptr, std::memory_order_release,
                                            std::memory_order_relaxed);
}

void TcpConnection::reclaimLent() {
  std::lock_guard<std::mutex> g(lendMu_);
  reclaimed_ = true;
}

const WireHeader* TcpConnection::peek(const void** payload) {
  if (recvTailLocal_ == recvHeadSeen_) {
    recvHeadSeen_ = recvHead_.load(std::memory_order_acquire);
    if (recvTailLocal_ == recvHeadSeen_) return nullptr;
  }
  *payload = payloadAt_[recvTailLocal_ % slots_];
  return reinterpret_cast<const WireHeader*>(slot(recvRing_, recvTailLocal_) + kHeaderAt);
}

void TcpConnection::release() {
  // Cleared before the slot is handed back, so the thread never sees a stale destination.
  posted_[recvTailLocal_ % slots_].store(nullptr, std::memory_order_relaxed);
  recvTail_.store(++recvTailLocal_, std::memory_order_release);
  owner_->kickThread();  // the thread may be waiting for this slot
}

// ---- thread side ----

Status TcpConnection::streamError(int s, const char* doing, int err) const {
  std::string what = "tcp: rank " + std::to_string(me_) + " lost its connection to rank " +
                     std::to_string(peer_) + " (stream " + std::to_string(s + 1) + " of " +
                     std::to_string(streams_.size()) + ") while " + doing + ": ";
  if (err == 0)
    what += "the peer closed it without saying goodbye";
  else
    what += strerror(err);
  return Status::RemoteError(what + ". Did rank " + std::to_string(peer_) +
                             " exit or crash, or did the network between the two hosts fail?");
}

void TcpConnection::advanceSendTail() {
  uint64_t t = sendTailLocal_;
  while (sent_[t % slots_]) sent_[t++ % slots_] = 0;
  if (t == sendTailLocal_) return;
  sendTailLocal_ = t;
  sendTail_.store(t, std::memory_order_release);
  owner_->notifyExecutor();
}

void TcpConnection::advanceRecvHead() {
  uint64_t h = recvHeadLocal_;
  while (received_[h % slots_]) received_[h++ % slots_] = 0;
  if (h == recvHeadLocal_) return;
  recvHeadLocal_ = h;
  recvHead_.store(h, std::memory_order_release);
  owner_->notifyExecutor();
}

// The thread meets lent or posted memory that the executor took back after a failure.
ssize_t TcpConnection::reclaimedError(const char* doing, Status* err) const {
  *err = Status::Aborted("tcp: rank " + std::to_string(me_) + " stopped " + doing + " rank " +
                         std::to_string(peer_) +
                         ": the collective failed and took its "
                         "buffers back mid-message");
  errno = 0;
  return -1;
}

// Writes more of a lent message: its header from the slot, its payload from the caller's
// memory, `done` bytes of the two already out. Returns what send() would.
ssize_t TcpConnection::writeLent(int fd, const char* header, size_t done, Status* err) {
  std::lock_guard<std::mutex> g(lendMu_);
  if (reclaimed_) return reclaimedError("sending to", err);
  const char* payload;
  memcpy(&payload, header + kHdr, sizeof payload);
  const size_t bytes = reinterpret_cast<const WireHeader*>(header)->bytes;
  iovec iov[2];
  int k = 0;
  if (done < kHdr) iov[k++] = {const_cast<char*>(header) + done, kHdr - done};
  const size_t from = done < kHdr ? 0 : done - kHdr;
  iov[k++] = {const_cast<char*>(payload) + from, bytes - from};
  msghdr mh{};
  mh.msg_iov = iov;
  mh.msg_iovlen = size_t(k);
  return sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool TcpConnection::pumpSend(int s, Status* err) {
  Stream& st = streams_[s];
  bool moved = false;
  while (st.canWrite && !st.eof && st.nextSend < sendHead_.load(std::memory_order_acquire)) {
    char* base = slot(sendRing_, st.nextSend) + kHeaderAt;
    const size_t total = kHdr + reinterpret_cast<WireHeader*>(base)->bytes;
    ssize_t n = lent_[st.nextSend % slots_] ? writeLent(st.sock.fd(), base, st.sendOff, err)
                                            : send(st.sock.fd(), base + st.sendOff,
                                                   total - st.sendOff, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (!err->ok()) return moved;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (wouldBlock(errno)) {
        st.canWrite = false;
        break;
      }
      *err = streamError(s, "sending", errno);
      return moved;
    }
    moved = true;
    st.sendOff += uint64_t(n);
    if (st.sendOff < total) continue;
    st.sendOff = 0;
    sent_[st.nextSend % slots_] = 1;
    st.nextSend += streams_.size();
    advanceSendTail();
  }
  return moved;
}

namespace {
char* const kClaimed = reinterpret_cast<char*>(uintptr_t(1));
}

// The thread starts message m's payload: where does it go?
char* TcpConnection::claimPosted(uint64_t m, uint32_t bytes) {
  const uint64_t k = m % slots_;
  char* p = posted_[k].exchange(kClaimed, std::memory_order_acquire);
  if (p == nullptr || p == kClaimed) return nullptr;
  return postBytes_[k].load(std::memory_order_relaxed) == bytes ? p : nullptr;
}

ssize_t TcpConnection::readPosted(int fd, char* into, size_t want, Status* err) {
  std::lock_guard<std::mutex> g(lendMu_);
  if (reclaimed_) return reclaimedError("receiving from", err);
  return recv(fd, into, want, MSG_DONTWAIT);
}

bool TcpConnection::pumpRecv(int s, Status* err) {
  Stream& st = streams_[s];
  bool moved = false;
  while (st.canRead && !st.eof) {
    char* dst;
    size_t want;
    const bool inHeader = st.recvOff < kHdr;
    if (inHeader) {
      dst = reinterpret_cast<char*>(&st.hdr) + st.recvOff;
      want = kHdr - st.recvOff;
    } else {
      // The payload needs a free slot; without one, TCP's window holds the peer back.
      if (st.nextRecv >= recvTail_.load(std::memory_order_acquire) + slots_) break;
      char* base = slot(recvRing_, st.nextRecv) + kHeaderAt;
      if (!st.placed) {  // once per message: a second claim would find kClaimed
        st.placed = true;
        memcpy(base, &st.hdr, kHdr);
        st.into = st.hdr.bytes ? claimPosted(st.nextRecv, st.hdr.bytes) : nullptr;
        payloadAt_[st.nextRecv % slots_] = st.into ? st.into : base + kHdr;
      }
      dst = st.into ? st.into + (st.recvOff - kHdr) : base + st.recvOff;
      want = kHdr + st.hdr.bytes - st.recvOff;
    }
    ssize_t n = !want     ? 0
                : st.into ? readPosted(st.sock.fd(), dst, want, err)
                          : recv(st.sock.fd(), dst, want, MSG_DONTWAIT);
    if (!err->ok()) return moved;
    if (want && n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && wouldBlock(errno)) {
        st.canRead = false;
        break;
      }
      if (st.goodbye) {  // the end of a stream whose peer said goodbye is expected
        st.eof = true;
        break;
      }
      *err = streamError(s, "receiving", n == 0 ? 0 : errno);
      return moved;
    }
    moved = true;
    st.recvOff += uint64_t(n);
    if (inHeader) {
      if (st.recvOff < kHdr) continue;
      const TcpHeaderKind kind = classifyHeader(st.hdr, chunk_);
      if (kind == TcpHeaderKind::Goodbye) {
        st.goodbye = true;
        st.recvOff = 0;
        bool all = true;
        for (const Stream& o : streams_) all &= o.goodbye;
        if (all) {
          goodbyeAll_.store(true, std::memory_order_release);
          owner_->notifyExecutor();
        }
        continue;
      }
      if (kind == TcpHeaderKind::Malformed) {
        *err = Status::RemoteError("tcp: rank " + std::to_string(me_) +
                                   " got a malformed message header from rank " +
                                   std::to_string(peer_) + " (" + std::to_string(st.hdr.bytes) +
                                   " bytes, limit " + std::to_string(chunk_) +
                                   "): do both ranks run the same Chorus version and "
                                   "CHORUS_TCP_CHUNK_BYTES?");
        return moved;
      }
    }
    if (st.recvOff < kHdr + st.hdr.bytes) continue;
    if (st.recvOff == kHdr) {  // an empty message: its slot must still be free
      if (st.nextRecv >= recvTail_.load(std::memory_order_acquire) + slots_) continue;
      char* base = slot(recvRing_, st.nextRecv) + kHeaderAt;
      memcpy(base, &st.hdr, kHdr);
      payloadAt_[st.nextRecv % slots_] = base + kHdr;
    }
    st.recvOff = 0;
    st.into = nullptr;
    st.placed = false;
    received_[st.nextRecv % slots_] = 1;
    st.nextRecv += streams_.size();
    advanceRecvHead();
  }
  return moved;
}

bool TcpConnection::flushed() const {
  return sendTailLocal_ == sendHead_.load(std::memory_order_acquire);
}

void TcpConnection::sayGoodbye() {
  for (Stream& st : streams_) {
    if (!st.sock.valid()) continue;
    if (st.sendOff == 0) {  // never in the middle of a message
      WireHeader bye{};
      bye.kind = kTcpGoodbye;
      ssize_t n = send(st.sock.fd(), &bye, kHdr, MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)n;
    }
    shutdown(st.sock.fd(), SHUT_WR);
  }
}

bool TcpConnection::drainInput() {
  bool all = true;
  char scratch[16384];
  for (Stream& st : streams_) {
    while (!st.eof && st.sock.valid()) {
      ssize_t n = recv(st.sock.fd(), scratch, sizeof scratch, MSG_DONTWAIT);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && wouldBlock(errno)) break;
      st.eof = true;
    }
    all &= st.eof || !st.sock.valid();
  }
  return all;
}

}  // namespace chorus
