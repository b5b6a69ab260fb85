// Accepting streams: the handshake check shared by set-up and by the progress thread, which
// keeps the listener open afterwards only to turn strangers away (and log them).
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/log.h"
#include "transport/tcp/handshake.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_internal.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

bool TcpTransport::checkHello(const TcpHello& h, const SockAddr& from, std::string* why) const {
  (void)from;
  if (h.magic != kTcpHelloMagic) return *why = "not a Chorus TCP handshake", false;
  if (h.version != kTcpProtocolVersion)
    return *why = "protocol version " + std::to_string(h.version) + ", expected " +
                  std::to_string(kTcpProtocolVersion),
           false;
  if (h.kind != kTcpHelloConnect) return *why = "not a connection request", false;
  if (!secretEquals(h.secret, secret_)) return *why = "wrong job secret (another job?)", false;
  if (h.to != rank_)
    return *why = "addressed to rank " + std::to_string(h.to) + ", this is rank " +
                  std::to_string(rank_),
           false;
  if (h.from < 0 || h.from >= rank_ || !reach_[h.from])
    return *why = "rank " + std::to_string(h.from) + " is not expected to connect here", false;
  if (h.nstreams != opts_.nstreams || h.chunkBytes != opts_.chunkBytes)
    return *why = "rank " + std::to_string(h.from) + " uses " + std::to_string(h.nstreams) +
                  " streams of " + std::to_string(h.chunkBytes) + "-byte chunks, this rank " +
                  std::to_string(opts_.nstreams) + " of " + std::to_string(opts_.chunkBytes) +
                  " (set CHORUS_SOCKET_NSTREAMS and CHORUS_TCP_CHUNK_BYTES alike)",
           false;
  if (h.stream < 0 || h.stream >= opts_.nstreams)
    return *why = "stream " + std::to_string(h.stream) + " out of range", false;
  if (conns_[h.from]->socket(h.stream).valid())
    return *why = "stream " + std::to_string(h.stream) + " from rank " + std::to_string(h.from) +
                  " is already connected",
           false;
  return true;
}

void TcpTransport::refuse(const SockAddr& from, const std::string& why) {
  refused_.fetch_add(1);
  LOG_WARN(kLogNet, "tcp: rank %d refused a connection from %s: %s; the job goes on", rank_,
           from.toString().c_str(), why.c_str());
}

// Reads what a pending connection sent so far. Returns true when it is finished with: either
// accepted (the stream is now in its connection) or refused (closed).
bool TcpTransport::readPending(Pending& p, bool setupOver) {
  char* dst = reinterpret_cast<char*>(&p.hello);
  ssize_t n = recv(p.sock.fd(), dst + p.got, sizeof p.hello - p.got, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n <= 0) {
    refuse(p.from, n == 0 ? "closed before finishing the handshake"
                          : std::string("read failed: ") + strerror(errno));
    return true;
  }
  p.got += size_t(n);
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
           "valid handshake for rank " + std::to_string(p.hello.from) + " but set-up is over");
    return true;
  }
  TcpHello ack = makeHello(kTcpHelloAccept, rank_, p.hello.from, p.hello.stream, opts_.nstreams,
                           uint32_t(opts_.chunkBytes), uint32_t(opts_.slots), secret_);
  Status st = sendAll(p.sock.fd(), &ack, sizeof ack, Deadline::after(5));
  if (!st.ok()) {
    refuse(p.from, "could not answer: " + st.toString());
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
    Status st = acceptOne(listener_.fd(), &p->sock, &p->from, &got);
    if (!st.ok()) {
      LOG_WARN(kLogNet, "tcp: rank %d: %s", rank_, st.toString().c_str());
      return;
    }
    if (!got) return;
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
    std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
    for (auto& p : pending_) fds.push_back({p->sock.fd(), POLLIN, 0});
    poll(fds.data(), fds.size(), deadline.remainingMs(100));
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
