// Accepting streams: the handshake check shared by set-up and by the progress thread, which
// keeps the listener open afterwards only to turn strangers away (and log them).
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/log.h"
#include "transport/tcp/handshake.h"
#include "transport/tcp/handshake_check.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_internal.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

bool TcpTransport::checkHello(const TcpHello& h, const SockAddr& from, std::string* why) const {
  (void)from;
  if (!checkConnectHello(h, rank_, reach_, opts_.nstreams, opts_.chunkBytes, why)) return false;
  if (conns_[h.from]->socket(h.stream).valid())
    return *why = "stream " + std::to_string(h.stream) + " from rank " + std::to_string(h.from) +
                  " is already connected",
           false;
  return true;
}

void TcpTransport::refuse(const SockAddr& from, const std::string& why) {
  refused_.fetch_add(1);
  LOG_WARN_LIMITED(refusals_, kLogNet,
                   "tcp: rank %d refused a connection from %s: %s; the job goes on", rank_,
                   from.toString().c_str(), why.c_str());
}

// Reads what has arrived of a fixed-size handshake record into record[*got, size). False while
// the socket has nothing more; a closed or failed connection is refused, and *gone set.
bool TcpTransport::fillRecord(Pending& p, void* record, size_t size, size_t* got,
                              const char* closedWhy, bool* gone) {
  *gone = false;
  ssize_t n = recv(p.sock.fd(), static_cast<char*>(record) + *got, size - *got, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n <= 0) {
    refuse(p.from, n == 0 ? closedWhy : std::string("read failed: ") + strerror(errno));
    *gone = true;
    return false;
  }
  *got += size_t(n);
  return true;
}

// Reads what a pending connection sent so far. Returns true when it is finished with: either
// accepted (the stream is now in its connection) or refused (closed).
bool TcpTransport::readPending(Pending& p, bool setupOver) {
  if (p.answered) return readProof(p);
  bool gone = false;
  if (!fillRecord(p, &p.hello, sizeof p.hello, &p.got, "closed before finishing the handshake",
                  &gone))
    return gone;
  if (p.got >= 4 && p.hello.magic != kTcpHelloMagic) {  // garbage: no need to wait for more
    refuse(p.from, "not a Chorus TCP handshake");
    return true;
  }
  if (p.got < sizeof p.hello) return false;
  std::string why;
  if (!checkHello(p.hello, p.from, &why)) {
    refuse(p.from, why);
    return true;
  }
  if (setupOver) {
    refuse(p.from,
           "a handshake for rank " + std::to_string(p.hello.from) + " after set-up was over");
    return true;
  }
  Status st = makeHello(kTcpHelloAccept, rank_, p.hello.from, p.hello.stream, opts_.nstreams,
                        uint32_t(opts_.chunkBytes), uint32_t(opts_.slots), &p.accept);
  if (st.ok()) {
    auth::Mac mac = acceptMac(secret_, p.hello, p.accept);
    memcpy(p.accept.mac, mac.data(), mac.size());
    st = sendAll(p.sock.fd(), &p.accept, sizeof p.accept, Deadline::after(5));
  }
  if (!st.ok()) {
    refuse(p.from, "could not answer: " + st.toString());
    return true;
  }
  p.answered = true;
  return readProof(p);  // usually not there yet
}

bool TcpTransport::readProof(Pending& p) {
  bool gone = false;
  if (!fillRecord(p, &p.proof, sizeof p.proof, &p.proofGot, "closed before proving the job secret",
                  &gone))
    return gone;
  if (p.proofGot < sizeof p.proof) return false;
  if (!auth::macEquals(p.proof.mac, connectMac(secret_, p.hello, p.accept).data())) {
    refuse(p.from, "wrong job secret (another job?)");
    return true;
  }
  if (conns_[p.hello.from]->socket(p.hello.stream).valid()) {
    refuse(p.from, "stream " + std::to_string(p.hello.stream) + " from rank " +
                       std::to_string(p.hello.from) + " is already connected");
    return true;
  }
  tuneStream(p.sock.fd(), opts_.timeoutSec);
  conns_[p.hello.from]->socket(p.hello.stream) = std::move(p.sock);
  return true;
}

void TcpTransport::acceptWaiting(bool setupOver) {
  for (;;) {
    auto p = std::make_unique<Pending>();
    bool got = false;
    int err = 0;
    Status st = acceptOne(listener_.fd(), &p->sock, &p->from, &got, &err);
    if (!st.ok()) {
      if (AcceptBackoff::isExhaustion(err)) restListener(setupOver);
      LOG_WARN_LIMITED(acceptFailures_, kLogNet, "tcp: rank %d: %s; the listener pauses %lld ms",
                       rank_, st.toString().c_str(),
                       (long long)(acceptBackoff_.pauseNs() / 1000000));
      return;
    }
    if (!got) return;
    acceptBackoff_.succeeded();
    if (pendingFrom(p->from) >= kMaxPendingPerSource || pending_.size() >= kMaxPending) {
      refuse(p->from, "too many unfinished handshakes from that address");
      continue;
    }
    p->deadline = Deadline::after(kHandshakeSec);
    p->id = nextPendingId_++;
    if (setupOver) {
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.u64 = kPendingTag | p->id;
      epoll_ctl(epoll_.fd(), EPOLL_CTL_ADD, p->sock.fd(), &ev);
    }
    pending_.push_back(std::move(p));
  }
}

size_t TcpTransport::pendingFrom(const SockAddr& from) const {
  std::string host = from.host();
  size_t n = 0;
  for (const auto& p : pending_) n += p->from.host() == host;
  return n;
}

void TcpTransport::restListener(bool setupOver) {
  acceptBackoff_.failed();
  if (!setupOver || listenerResting_) return;
  epoll_event ev{};
  ev.data.u64 = kListenTag;
  epoll_ctl(epoll_.fd(), EPOLL_CTL_MOD, listener_.fd(), &ev);  // no events: not watched
  listenerResting_ = true;
}

void TcpTransport::wakeListenerIfRested() {
  if (!listenerResting_ || !acceptBackoff_.ready()) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenTag;
  epoll_ctl(epoll_.fd(), EPOLL_CTL_MOD, listener_.fd(), &ev);
  listenerResting_ = false;
}

void TcpTransport::handleListener() {
  acceptWaiting(true);
}

void TcpTransport::handlePending(uint32_t id) {
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i]->id != id) continue;
    if (readPending(*pending_[i], true)) pending_.erase(pending_.begin() + long(i));
    return;
  }
}

void TcpTransport::expirePending() {
  for (size_t i = 0; i < pending_.size();) {
    if (pending_[i]->deadline.expired()) {
      refuse(pending_[i]->from, "no handshake within " + std::to_string(int(kHandshakeSec)) + " s");
      pending_.erase(pending_.begin() + long(i));
    } else {
      ++i;
    }
  }
}

Status TcpTransport::acceptAll(Deadline deadline) {
  auto missing = [&] {
    std::string list;
    for (int q = 0; q < rank_; ++q)
      if (reach_[q])
        for (int s = 0; s < opts_.nstreams; ++s)
          if (!conns_[q]->socket(s).valid()) {
            list += (list.empty() ? "" : ", ") + std::to_string(q);
            break;
          }
    return list;
  };
  for (std::string left = missing(); !left.empty(); left = missing()) {
    if (deadline.expired())
      return Status::Timeout("tcp: rank " + std::to_string(rank_) + " (listening on " +
                             listenAddr_.toString() + ", " + ifName_ +
                             ") timed out waiting for connections from rank(s) " + left +
                             ". Are they running, and can they reach this address? Pick the "
                             "interface with CHORUS_SOCKET_IFNAME");
    // A resting listener (accept ran out of descriptors) is left out of the poll set.
    const bool rested = acceptBackoff_.ready();
    std::vector<pollfd> fds{{rested ? listener_.fd() : -1, POLLIN, 0}};
    for (auto& p : pending_) fds.push_back({p->sock.fd(), POLLIN, 0});
    poll(fds.data(), fds.size(), deadline.remainingMs(rested ? 100 : acceptBackoff_.restMs()));
    if (fds[0].revents) acceptWaiting(false);
    for (size_t i = 1, k = 0; i < fds.size(); ++i) {
      if (fds[i].revents && readPending(*pending_[k], false))
        pending_.erase(pending_.begin() + long(k));
      else
        ++k;
    }
    expirePending();
  }
  return Status::Ok();
}

}  // namespace chorus
