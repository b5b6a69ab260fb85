// StarBootstrap's lifetime, service thread and failure bookkeeping.
#include "bootstrap/star.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>
#include <system_error>

#include "common/log.h"

namespace chorus::boot {
namespace {

// An error a rank reported, as the others see it: a usage error (mismatched calls) stays one,
// so that every rank of the job returns InvalidUsage for it; anything else is a remote error.
Status reportedBy(const std::string& who, const Status& theirs) {
  std::string text = who + " reported an error: " + theirs.message();
  return theirs.code() == StatusCode::InvalidUsage ? Status::InvalidUsage(std::move(text))
                                                   : Status::RemoteError(std::move(text));
}

}  // namespace

StarBootstrap::StarBootstrap(int rank, int size, const uint8_t* secret, bool weakSecret,
                             std::vector<std::unique_ptr<PeerLink>> peers)
    : rank_(rank),
      size_(size),
      weakSecret_(weakSecret),
      peers_(std::move(peers)),
      mailbox_(size),
      left_(new std::atomic<bool>[size]()) {
  memcpy(secret_, secret, kSecretBytes);
}

SockAddr StarBootstrap::localAddress() const {
  for (const auto& p : peers_) {
    SockAddr a;
    if (p && p->sock.valid() && chorus::localAddress(p->sock.fd(), &a).ok()) {
      a.setPort(0);
      return a;
    }
  }
  SockAddr lo;  // a job of one: only this host
  (void)resolveHost("127.0.0.1", 0, &lo);
  return lo;
}

Status StarBootstrap::start() {
  wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeFd_ < 0) return Status::FromErrno(errno, "eventfd for the bootstrap service thread");
  try {
    thread_ = std::thread([this] { serviceLoop(); });
  } catch (const std::system_error& e) {
    return Status::SystemError(std::string("could not start the bootstrap service thread: ") +
                               e.what());
  }
  return Status::Ok();
}

StarBootstrap::~StarBootstrap() {
  // Stop watching first: what the peers do once they hear goodbye (close) is no failure.
  stopping_ = true;
  if (thread_.joinable()) {
    uint64_t one = 1;
    ssize_t n = write(wakeFd_, &one, sizeof one);
    (void)n;
    thread_.join();
  }
  Deadline d = Deadline::after(1.0);
  for (auto& p : peers_)
    if (p) (void)send(p->rank, kGoodbye, nullptr, 0, d);
  if (wakeFd_ >= 0) close(wakeFd_);
}

void StarBootstrap::serviceLoop() {
  for (auto& p : peers_)
    if (p) drainFrames(*p);  // the handshake may have read past its last frame
  std::vector<pollfd> fds;
  std::vector<PeerLink*> links;
  while (!stopping_) {
    fds.assign(1, pollfd{wakeFd_, POLLIN, 0});
    links.clear();
    for (auto& p : peers_) {
      if (!p || !p->open) continue;
      fds.push_back({p->sock.fd(), POLLIN, 0});
      links.push_back(p.get());
    }
    if (poll(fds.data(), fds.size(), pollTimeoutMs()) < 0) {
      if (errno == EINTR) continue;
      LOG_WARN(kLogBoot, "rank %d: bootstrap service poll failed: %s", rank_, strerror(errno));
      return;
    }
    if (fds[0].revents) {
      if (stopping_) return;
      uint64_t n;
      (void)!read(wakeFd_, &n, sizeof n);
      takeProbeRequest();
    }
    for (size_t i = 0; i < links.size(); ++i)
      if (fds[i + 1].revents) serviceReadable(*links[i]);
    if (probing_ && probeSettled()) finishProbe();
  }
}

void StarBootstrap::serviceReadable(PeerLink& p) {
  bool closed = false;
  Status st = p.reader.readAvailable(p.sock.fd(), &closed);
  drainFrames(p);
  if (!p.open) return;
  if (!st.ok())
    peerClosed(p, st);
  else if (closed)
    peerClosed(p, Status::RemoteError("its bootstrap connection closed without goodbye"));
}

void StarBootstrap::drainFrames(PeerLink& p) {
  while (p.open) {
    Frame f;
    bool got = false;
    Status st = p.reader.next(&f, &got);
    if (!st.ok()) return peerClosed(p, st.withContext("it sent a malformed bootstrap message"));
    if (!got) return;
    handleFrame(p, f);
  }
}

void StarBootstrap::handleFrame(PeerLink& p, Frame& f) {
  if (f.type == kData) {
    Reader r(f.payload);
    Message m;
    Status st = decodeDataHeader(&r, &m.header);
    if (st.ok() && m.header.src != p.rank)
      st = Status::Internal("DATA names rank " + std::to_string(m.header.src) + " as its source");
    if (!st.ok()) return peerClosed(p, st.withContext("it broke the bootstrap protocol"));
    m.payload.assign(r.rest(), r.rest() + r.left());
    mailbox_.put(std::move(m));
  } else if (f.type == kGoodbye) {
    LOG_TRACE(kLogBoot, "rank %d: %s left cleanly", rank_, describeRank(p.rank, p.who).c_str());
    p.saidGoodbye = true;
    p.open = false;
    mailbox_.peerLeft(p.rank);
    markLeft(p.rank);
    if (rank_ == 0) {
      // The others have no link to p: tell them, so nobody waits for data p can no longer send.
      uint32_t who = uint32_t(p.rank);
      Deadline d = Deadline::after(1.0);
      for (auto& q : peers_)
        if (q && q.get() != &p && !q->saidGoodbye && q->open)
          (void)send(q->rank, kPeerLeft, &who, sizeof who, d);
    }
  } else if (f.type == kPeerLeft && rank_ != 0 && f.payload.size() == sizeof(uint32_t)) {
    uint32_t who = 0;
    memcpy(&who, f.payload.data(), sizeof who);
    markLeft(int(who));
  } else if (f.type == kPeerError) {
    Status theirs = decodeError(f.payload);
    peerFailed(p.rank, reportedBy(describeRank(p.rank, p.who), theirs));
  } else if (f.type == kPeerFailed && rank_ != 0) {
    Reader r(f.payload);
    int32_t failed = -1;
    r.i32(&failed);
    std::vector<uint8_t> rest(r.rest(), r.rest() + r.left());
    recordFailure(decodeError(rest));
  } else if (f.type >= kProbeAsk && f.type <= kProbeFinding) {
    handleProbeFrame(p, f);
  } else {
    peerClosed(p, Status::Internal("it sent unexpected message type " + std::to_string(f.type)));
  }
}

void StarBootstrap::peerClosed(PeerLink& p, const Status& why) {
  p.open = false;
  if (p.saidGoodbye) return;
  std::string what = why.message().rfind("its bootstrap connection closed", 0) == 0
                         ? " died: " + why.message()
                         : " failed: " + why.message();
  // Poison before marking it gone, so waiters report the death rather than a clean exit.
  peerFailed(p.rank, Status::RemoteError(describeRank(p.rank, p.who) + what));
  mailbox_.peerLeft(p.rank);
}

void StarBootstrap::peerFailed(int rank, const Status& st) {
  recordFailure(st);
  if (rank_ == 0) relayFailure(rank, st);
}

void StarBootstrap::relayFailure(int failedRank, const Status& st) {
  Writer w;
  w.u32(uint32_t(failedRank));
  std::vector<uint8_t> err = encodeError(st);
  w.bytes(err.data(), err.size());
  Deadline d = Deadline::after(1.0);
  for (auto& p : peers_) {
    if (!p || p->rank == failedRank || p->saidGoodbye || !p->open) continue;
    Status sent = send(p->rank, kPeerFailed, w.buffer().data(), w.buffer().size(), d);
    if (!sent.ok())
      LOG_TRACE(kLogBoot, "rank 0: could not relay a failure to rank %d: %s", p->rank,
                sent.message().c_str());
  }
}

void StarBootstrap::markLeft(int rank) {
  if (rank >= 0 && rank < size_) left_[rank].store(true, std::memory_order_release);
}

void StarBootstrap::recordFailure(const Status& st) {
  FailureHandler call;
  {
    std::lock_guard<std::mutex> lock(failMu_);
    if (!failure_.ok()) return;
    failure_ = st;
    if (handler_ && !handlerCalled_ && !stopping_) {
      handlerCalled_ = true;
      call = handler_;
    }
  }
  LOG_WARN(kLogBoot, "rank %d: %s", rank_, st.message().c_str());
  mailbox_.poison(st);
  if (call) call(st);
}

void StarBootstrap::setFailureHandler(FailureHandler handler) {
  Status pending;
  {
    std::lock_guard<std::mutex> lock(failMu_);
    if (failure_.ok() || handlerCalled_ || !handler) {
      handler_ = std::move(handler);
      return;
    }
    handlerCalled_ = true;
    pending = failure_;
  }
  handler(pending);
}

Status StarBootstrap::firstFailure() {
  std::lock_guard<std::mutex> lock(failMu_);
  return failure_;
}

void StarBootstrap::reportError(const Status& status) {
  Deadline d = Deadline::after(0.5);
  if (rank_ != 0) {
    std::vector<uint8_t> p = encodeError(status);
    (void)send(0, kPeerError, p.data(), p.size(), d);
    return;
  }
  Status named = reportedBy(describeRank(0, selfIdentity()), status);
  Writer w;
  w.u32(0);
  std::vector<uint8_t> err = encodeError(named);
  w.bytes(err.data(), err.size());
  for (auto& p : peers_)
    if (p) (void)send(p->rank, kPeerFailed, w.buffer().data(), w.buffer().size(), d);
}

Status StarBootstrap::send(int peer, uint32_t type, const void* data, size_t bytes,
                           Deadline deadline) {
  PeerLink* p = peer >= 0 && peer < size_ ? peers_[peer].get() : nullptr;
  if (!p) return Status::Internal("no bootstrap connection to rank " + std::to_string(peer));
  std::lock_guard<std::mutex> lock(p->writeMu);
  if (p->writeBroken)
    return Status::RemoteError("the bootstrap connection to rank " + std::to_string(peer) +
                               " is unusable after an earlier send timed out");
  Status st = sendFrame(p->sock.fd(), type, data, bytes, deadline);
  if (st.code() == StatusCode::Timeout) p->writeBroken = true;
  return st.withContext("sending to " + describeRank(peer, p->who));
}

}  // namespace chorus::boot
