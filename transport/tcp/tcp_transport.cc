// The progress thread, the sleeping protocol and shutdown. Set-up is in tcp_setup.cc.
#include "transport/tcp/tcp_transport.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "transport/futex.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_internal.h"

namespace chorus {

namespace {
// epoll user data: which socket woke us.
constexpr uint64_t kKickTag = ~0ull;
uint64_t streamTag(int peer, int s) {
  return uint64_t(peer) << 8 | uint64_t(s);
}
}  // namespace

Connection* TcpTransport::connection(int peer) {
  if (peer < 0 || size_t(peer) >= conns_.size()) return nullptr;
  return conns_[peer].get();
}

bool TcpTransport::peerFinished(int peer) const {
  if (peer < 0 || size_t(peer) >= conns_.size() || !conns_[peer]) return true;
  return conns_[peer]->finished();
}

// ---- waking each other ----
// Both directions use the same pattern: publish, full fence, then look at the other side's
// "sleeping" flag; the sleeper raises its flag, fences, and re-checks before it sleeps. So
// either the sleeper sees the work or the publisher sees the flag and wakes it.

void TcpTransport::kickThread() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (threadSleeping_.load(std::memory_order_relaxed)) {
    uint64_t one = 1;
    ssize_t n = write(kick_.fd(), &one, sizeof one);
    (void)n;  // a full counter still wakes the thread
  }
}

void TcpTransport::notifyExecutor() {
  hooks_.doorbell->ring();
}

// ---- the thread ----

Status TcpTransport::startThread() {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return Status::FromErrno(errno, "tcp: epoll_create1");
  epoll_ = Socket(ep);
  int kfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (kfd < 0) return Status::FromErrno(errno, "tcp: eventfd");
  kick_ = Socket(kfd);
  auto add = [&](int fd, uint32_t events, uint64_t tag) -> Status {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
      return Status::FromErrno(errno, "tcp: epoll_ctl");
    return Status::Ok();
  };
  CHORUS_RETURN_IF_ERROR(add(kfd, EPOLLIN, kKickTag));
  CHORUS_RETURN_IF_ERROR(add(listener_.fd(), EPOLLIN, kListenTag));
  for (auto& p : pending_)  // strangers that connected during set-up
    CHORUS_RETURN_IF_ERROR(add(p->sock.fd(), EPOLLIN | EPOLLRDHUP, kPendingTag | p->id));
  for (auto& c : conns_)
    if (c)
      for (int s = 0; s < c->nstreams(); ++s)
        CHORUS_RETURN_IF_ERROR(add(c->socket(s).fd(), EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                   streamTag(c->peer(), s)));
  thread_ = std::thread([this] { threadMain(); });
  return Status::Ok();
}

void TcpTransport::raise(const Status& st) {
  if (raised_.exchange(true)) return;
  if (hooks_.onError)
    hooks_.onError(st);  // the communicator logs it
  else
    LOG_WARN(kLogNet, "%s", st.toString().c_str());
  hooks_.doorbell->wake();
}

bool TcpTransport::progressAll() {
  bool moved = false;
  for (auto& c : conns_) {
    if (!c) continue;
    for (int s = 0; s < c->nstreams(); ++s) {
      Status err;
      moved |= c->pumpRecv(s, &err);
      if (err.ok()) moved |= c->pumpSend(s, &err);
      if (!err.ok()) {
        raise(err);
        // A broken stream stays broken: stop polling it so the loop does not spin on it.
        epoll_ctl(epoll_.fd(), EPOLL_CTL_DEL, c->socket(s).fd(), nullptr);
        c->socket(s).reset();
        c->streams_[s].eof = true;
      }
    }
  }
  return moved;
}

void TcpTransport::threadMain() {
  epoll_event events[64];
  while (!stop_.load(std::memory_order_acquire)) {
    if (progressAll()) continue;
    threadSleeping_.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (progressAll() || stop_.load()) {
      threadSleeping_.store(0, std::memory_order_relaxed);
      continue;
    }
    // A bounded wait even with nothing pending: handshakes of strangers must expire.
    int waitMs = pending_.empty() ? 1000 : 100;
    if (listenerResting_) waitMs = std::min(waitMs, acceptBackoff_.restMs());
    int n = epoll_wait(epoll_.fd(), events, 64, waitMs);
    threadSleeping_.store(0, std::memory_order_relaxed);
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = events[i].data.u64;
      if (tag == kKickTag) {
        uint64_t v;
        ssize_t r = read(kick_.fd(), &v, sizeof v);
        (void)r;
      } else if (tag == kListenTag) {
        handleListener();
      } else if (tag & kPendingTag) {
        handlePending(uint32_t(tag));
      } else {
        TcpConnection* c = conns_[tag >> 8].get();
        if (c) c->markReady(int(tag & 0xff));
      }
    }
    expirePending();
    wakeListenerIfRested();
  }
  drain();
}

// Shutdown: push out what the executor posted (a peer may still need it), say goodbye on every
// stream, then give the peers a moment to say goodbye back so no close() turns into a reset.
void TcpTransport::drain() {
  const bool healthy = !(hooks_.failed && hooks_.failed->load()) && !raised_.load();
  epoll_event events[64];
  auto waitLoop = [&](Deadline until, auto done) {
    while (!done() && !until.expired()) {
      if (progressAll()) continue;
      int n = epoll_wait(epoll_.fd(), events, 64, until.remainingMs(50));
      for (int i = 0; i < n; ++i) {
        const uint64_t tag = events[i].data.u64;
        if (tag != kKickTag && tag != kListenTag && !(tag & kPendingTag) && conns_[tag >> 8])
          conns_[tag >> 8]->markReady(int(tag & 0xff));
      }
    }
  };
  if (healthy)
    waitLoop(Deadline::after(opts_.timeoutSec), [&] {
      if (raised_.load()) return true;
      for (auto& c : conns_)
        if (c && !c->flushed()) return false;
      return true;
    });
  for (auto& c : conns_)
    if (c) c->sayGoodbye();
  Deadline linger = Deadline::after(healthy ? 1.0 : 0.05);
  while (!linger.expired()) {
    bool all = true;
    for (auto& c : conns_)
      if (c) all &= c->drainInput();
    if (all) break;
    epoll_wait(epoll_.fd(), events, 64, linger.remainingMs(20));
  }
}

TcpTransport::~TcpTransport() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    uint64_t one = 1;
    ssize_t n = write(kick_.fd(), &one, sizeof one);
    (void)n;
    thread_.join();
  }
  conns_.clear();
}

}  // namespace chorus
