// Set-up: pick the interface, listen, swap addresses through the bootstrap, then the lower
// rank of every TCP pair opens the streams and the higher one accepts them (handshake.h).
// Connecting first and accepting after cannot deadlock: the kernel completes connections into
// the listen backlog, and the handshake records fit in any socket buffer. A rank finishes
// accepting once every lower rank has sent its proofs, which rank 0 does at once (it accepts
// nothing), rank 1 after that, and so on.
#include <netinet/tcp.h>
#include <sys/epoll.h>

#include <cstring>

#include "common/log.h"
#include "transport/rails.h"
#include "transport/tcp/handshake.h"
#include "transport/tcp/handshake_check.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_internal.h"

namespace chorus {

namespace {
// What each rank publishes about its listener.
struct AddrRecord {
  uint8_t sa[sizeof(sockaddr_in6)];
  uint32_t len;
  uint32_t nstreams;
  uint32_t chunkBytes;
  char ifname[20];
};
}  // namespace

void tuneStream(int fd, double timeoutSec) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  double ms = timeoutSec * 1000;
  unsigned int userTimeout = ms > 2e9 ? 2000000000u : unsigned(ms);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeout, sizeof userTimeout);
}

Status TcpTransport::create(Bootstrap* bs, const std::vector<bool>& reach, bool loopbackOk,
                            const TcpOptions& opts, TcpHooks hooks, Deadline deadline,
                            std::unique_ptr<TcpTransport>* out) {
  CHORUS_RETURN_IF_ERROR(opts.validate());
  std::unique_ptr<TcpTransport> t(new TcpTransport);
  t->opts_ = opts;
  t->hooks_ = std::move(hooks);
  t->rank_ = bs->rank();
  t->size_ = bs->size();
  memcpy(t->secret_, bs->secret(), kSecretBytes);
  t->reach_ = reach;
  t->reach_.resize(size_t(t->size_), false);
  t->reach_[size_t(t->rank_)] = false;
  bool any = false;
  for (bool r : t->reach_) any |= r;

  AddrRecord mine{};
  Status local;
  if (any) local = t->listen(loopbackOk, bs->weakSecret());
  if (local.ok() && any) {
    memcpy(mine.sa, &t->listenAddr_.storage, t->listenAddr_.len);
    mine.len = t->listenAddr_.len;
    snprintf(mine.ifname, sizeof mine.ifname, "%s", t->ifName_.c_str());
  }
  mine.nstreams = uint32_t(opts.nstreams);
  mine.chunkBytes = uint32_t(opts.chunkBytes);
  std::vector<AddrRecord> all(size_t(t->size_));
  // Everyone joins the exchange, even after a local failure, so no rank waits for nothing.
  CHORUS_RETURN_IF_ERROR(bs->allgather(&mine, sizeof mine, all.data(), deadline)
                             .withContext("tcp: exchanging listen addresses"));
  CHORUS_RETURN_IF_ERROR(local);
  std::vector<SockAddr> addrs(size_t(t->size_));
  for (int q = 0; q < t->size_; ++q) {
    if (!t->reach_[q]) continue;
    const AddrRecord& a = all[size_t(q)];
    if (a.nstreams != mine.nstreams || a.chunkBytes != mine.chunkBytes)
      return Status::InvalidArgument(
          "tcp: rank " + std::to_string(q) + " uses " + std::to_string(a.nstreams) +
          " streams and " + std::to_string(a.chunkBytes) + "-byte chunks, rank " +
          std::to_string(t->rank_) + " " + std::to_string(mine.nstreams) + " and " +
          std::to_string(mine.chunkBytes) +
          ": set CHORUS_SOCKET_NSTREAMS and CHORUS_TCP_CHUNK_BYTES alike on every rank");
    if (a.len == 0 || a.len > sizeof a.sa)
      return Status::RemoteError("tcp: rank " + std::to_string(q) +
                                 " could not open a TCP listener (see its log)");
    memcpy(&addrs[size_t(q)].storage, a.sa, a.len);
    addrs[size_t(q)].len = a.len;
  }
  t->conns_.resize(size_t(t->size_));
  for (int q = 0; q < t->size_; ++q)
    if (t->reach_[q])
      t->conns_[size_t(q)] = std::make_unique<TcpConnection>(
          t.get(), t->rank_, q, opts.nstreams, opts.slots, opts.chunkBytes, opts.zeroCopyBytes);
  if (any) {
    CHORUS_RETURN_IF_ERROR(t->connectAll(addrs, deadline));
    CHORUS_RETURN_IF_ERROR(t->acceptAll(deadline));
    CHORUS_RETURN_IF_ERROR(t->confirmAll(addrs, deadline));
    CHORUS_RETURN_IF_ERROR(t->startThread());
  }
  *out = std::move(t);
  return Status::Ok();
}

Status TcpTransport::listen(bool loopbackOk, bool weakSecret) {
  NetInterface chosen{"lo", {}};
  std::vector<std::string> rails;
  if (opts_.ifname.empty() && loopbackOk) {
    CHORUS_RETURN_IF_ERROR(
        resolveHost(opts_.family == AF_INET6 ? "::1" : "127.0.0.1", 0, &chosen.addr));
  } else {
    CHORUS_RETURN_IF_ERROR(
        findRailInterface(opts_.ifname, opts_.family, opts_.localIndex, &chosen, &rails)
            .withContext("tcp transport"));
  }
  ifName_ = chosen.name;
  SockAddr at = chosen.addr;
  at.setPort(0);
  if (weakSecret && !at.isLoopback())
    return Status::InvalidArgument(
        "rank " + std::to_string(rank_) + ": tcp transport would listen at " + at.toString() +
        " on " + ifName_ + " (CHORUS_SOCKET_IFNAME=" + opts_.ifname +
        "), but this job's secret is derived from its loopback root address and job id, which "
        "any program can compute, so it would let others in there: give every rank the same "
        "CHORUS_SECRET (`export CHORUS_SECRET=$(openssl rand -hex 32)`), or set CHORUS_INSECURE=1 "
        "to accept the risk");
  CHORUS_RETURN_IF_ERROR(listenOn(at, 1024, &listener_).withContext("tcp transport"));
  CHORUS_RETURN_IF_ERROR(localAddress(listener_.fd(), &listenAddr_));
  LOG_INFO(kLogNet,
           "rank %d: tcp transport on %s, listening at %s; %d stream(s) per peer, "
           "%zu-byte chunks, %d slots (CHORUS_SOCKET_IFNAME=%s%s)",
           rank_, ifName_.c_str(), listenAddr_.toString().c_str(), opts_.nstreams, opts_.chunkBytes,
           opts_.slots, opts_.ifname.empty() ? "<default>" : opts_.ifname.c_str(),
           rails.size() > 1 ? railNote(rails, opts_.localIndex).c_str() : "");
  return Status::Ok();
}

Status TcpTransport::connectAll(const std::vector<SockAddr>& addrs, Deadline deadline) {
  sentHellos_.assign(size_t(size_) * size_t(opts_.nstreams), TcpHello{});
  for (int q = rank_ + 1; q < size_; ++q) {
    if (!reach_[q]) continue;
    for (int s = 0; s < opts_.nstreams; ++s) {
      Socket sock;
      int lastErrno = 0;
      Status st = connectWithRetry(addrs[q], deadline, &sock, &lastErrno);
      if (!st.ok())
        return st.withContext("tcp: rank " + std::to_string(rank_) + " connecting to rank " +
                              std::to_string(q) + " (stream " + std::to_string(s + 1) +
                              "); is the address right for this host's network? Choose the "
                              "interface with CHORUS_SOCKET_IFNAME");
      TcpHello& h = sentHellos_[size_t(q) * size_t(opts_.nstreams) + size_t(s)];
      CHORUS_RETURN_IF_ERROR(makeHello(kTcpHelloConnect, rank_, q, s, opts_.nstreams,
                                       uint32_t(opts_.chunkBytes), uint32_t(opts_.slots), &h));
      CHORUS_RETURN_IF_ERROR(sendAll(sock.fd(), &h, sizeof h, deadline)
                                 .withContext("tcp: handshake to rank " + std::to_string(q)));
      tuneStream(sock.fd(), opts_.timeoutSec);
      conns_[q]->socket(s) = std::move(sock);
    }
  }
  return Status::Ok();
}

// The accepting side's answer proves it is the rank we meant and that it knows the secret;
// this rank's proof follows.
Status TcpTransport::confirmAll(const std::vector<SockAddr>& addrs, Deadline deadline) {
  for (int q = rank_ + 1; q < size_; ++q) {
    if (!reach_[q]) continue;
    for (int s = 0; s < opts_.nstreams; ++s) {
      TcpHello h{};
      const std::string where = "tcp: rank " + std::to_string(rank_) + " waiting for rank " +
                                std::to_string(q) + " at " + addrs[q].toString() +
                                " to accept stream " + std::to_string(s + 1);
      CHORUS_RETURN_IF_ERROR(
          recvAll(conns_[q]->socket(s).fd(), &h, sizeof h, deadline).withContext(where));
      const TcpHello& sent = sentHellos_[size_t(q) * size_t(opts_.nstreams) + size_t(s)];
      if (!checkAccept(h, sent, secret_, q, rank_, s))
        return Status::RemoteError(where + ": the answer is not rank " + std::to_string(q) +
                                   "'s (wrong secret or a different job at that address)");
      TcpProof proof;
      auth::Mac mac = connectMac(secret_, sent, h);
      memcpy(proof.mac, mac.data(), mac.size());
      CHORUS_RETURN_IF_ERROR(
          sendAll(conns_[q]->socket(s).fd(), &proof, sizeof proof, deadline).withContext(where));
    }
  }
  sentHellos_.clear();
  return Status::Ok();
}

}  // namespace chorus
