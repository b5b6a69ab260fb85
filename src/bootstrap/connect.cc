// Bootstrap::connect: meet at the root, learn rank 0's address, then build the star.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/hello_collector.h"
#include "bootstrap/star.h"
#include "bootstrap/unique_id_codec.h"
#include "bootstrap/wire.h"
#include "common/log.h"

namespace chorus {
namespace boot {
namespace {

struct Attempt {
  int rank;
  int size;
  const RootInfo& root;
  Deadline deadline;
  double totalSec;  // for messages: how long this connect was allowed

  Hello hello() const {
    Hello h;
    h.rank = rank;
    h.size = size;
    PeerIdentity me = selfIdentity();
    h.pid = me.pid;
    h.host = me.host;
    return h;
  }
};

// Connects to a bootstrap listener and takes its challenge. A listener crowded with unvetted
// connections closes new ones before challenging them; then this retries, with a growing
// pause, until the deadline. `unreachableHint` says what to check when it cannot be reached.
Status greet(const Attempt& a, const SockAddr& addr, const std::string& where,
             const char* unreachableHint, Socket* s, FrameReader* reader, auth::Nonce* challenge,
             uint32_t maxFrame = kMaxHandshakeFrame) {
  const Deadline deadline = a.deadline;
  auto turnedAway = [&] {
    return Status::Timeout(where + " kept turning this rank away for " + secondsText(a.totalSec) +
                           " s: it is crowded with other connections (see its log)");
  };
  for (double pause = 0.01;; pause = std::min(pause * 2, 0.5)) {
    *reader = FrameReader(maxFrame);
    int err = 0;
    if (!connectWithRetry(addr, deadline, s, &err).ok())
      return Status::Timeout("could not reach " + where + " within " + secondsText(a.totalSec) +
                             " s: " + strerror(err) + ". " + unreachableHint);
    Frame f;
    Status st = recvFrame(s->fd(), reader, deadline, &f);
    if (st.ok()) {
      if (f.type != kChallenge) return unexpectedFrame(f, where, "a challenge");
      if (f.payload.size() != challenge->size())
        return Status::RemoteError(where + " sent a malformed challenge");
      memcpy(challenge->data(), f.payload.data(), challenge->size());
      return Status::Ok();
    }
    if (st.code() == StatusCode::Timeout)
      return Status::Timeout(where + " accepted the connection but sent no challenge");
    LOG_INFO(kLogBoot, "%s closed the connection before challenging it (%s); retrying",
             where.c_str(), st.message().c_str());
    s->reset();
    if (deadline.remainingNs() < int64_t(pause * 1e9)) return turnedAway();
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
}

Status meetRoot(const Attempt& a, Socket* starListener, Table* table) {
  std::string where = "bootstrap root at " + a.root.addr.toString();
  Socket s;
  FrameReader reader;
  auth::Nonce challenge;
  CHORUS_RETURN_IF_ERROR(greet(a, a.root.addr, "the " + where,
                               "Is rank 0 / the process that created the unique id running, and "
                               "is the address reachable? Set CHORUS_SOCKET_IFNAME to choose the "
                               "interface",
                               &s, &reader, &challenge));
  Hello h = a.hello();
  if (a.rank == 0 && a.size > 1) {
    // Rank 0's listener binds the local address that reached the root, on the interface the
    // job uses (not every interface), and advertises it: the others can most likely reach it.
    SockAddr local;
    CHORUS_RETURN_IF_ERROR(localAddress(s.fd(), &local));
    local.setPort(0);
    CHORUS_RETURN_IF_ERROR(
        listenOn(local, 1024, starListener).withContext("rank 0's bootstrap listener"));
    CHORUS_RETURN_IF_ERROR(localAddress(starListener->fd(), &h.starAddr));
  }
  CHORUS_RETURN_IF_ERROR(signHello(&h, a.root.secret, challenge));
  std::vector<uint8_t> payload = encodeHello(h);
  CHORUS_RETURN_IF_ERROR(sendFrame(s.fd(), kHello, payload.data(), payload.size(), a.deadline)
                             .withContext("saying hello to the " + where));
  Frame f;
  Status st = recvFrame(s.fd(), &reader, a.deadline, &f);
  if (st.code() == StatusCode::Timeout)  // the root's word on who is missing may be on its way
    st = recvFrame(s.fd(), &reader, Deadline::after(kVerdictGraceSec), &f);
  if (st.code() == StatusCode::Timeout)
    return Status::Timeout("timed out after " + secondsText(a.totalSec) +
                           " s waiting for the other ranks to reach the " + where +
                           " (it has not heard from all " + std::to_string(a.size) +
                           " ranks yet, and did not say which it misses: is the process that "
                           "runs it, rank 0 / the creator of the unique id, stopped or hung?)");
  if (!st.ok())
    return Status::RemoteError("the " + where + " closed the connection without an answer (" +
                               st.message() +
                               "); it may have exited or rejected this rank. Is rank 0 / the "
                               "process that created the unique id still running?");
  if (f.type != kTable) return unexpectedFrame(f, "the " + where, "the rank table");
  std::vector<uint8_t> body;
  CHORUS_RETURN_IF_ERROR(
      openAnswer(a.root.secret, h, challenge, f, &body).withContext("the " + where));
  return decodeTable(body, table);
}

Status acceptStar(const Attempt& a, const Socket& listener, const Table& table,
                  std::vector<std::unique_ptr<PeerLink>>* peers) {
  // Named by the address it advertised (it listens on every interface).
  HelloCollector c(listener.fd(), {a.root.secret, 1, a.size,
                                   "rank 0's bootstrap listener " + table.starAddr.toString()});
  Status st = c.run(a.deadline);
  if (st.code() == StatusCode::Timeout) {
    st = Status::Timeout("rank 0 timed out after " + secondsText(a.totalSec) +
                         " s waiting for ranks to connect to it; " + missingRanks(c.missing()) +
                         " (they reached the bootstrap root, so they died since or cannot "
                         "reach rank 0: check firewalls and CHORUS_SOCKET_IFNAME)");
    for (auto& adm : c.admitted())
      if (adm) sendErrorFrame(adm->sock.fd(), st);
  }
  CHORUS_RETURN_IF_ERROR(st);
  for (int r = 1; r < a.size; ++r) {
    Admitted& adm = *c.admitted()[r];
    std::vector<uint8_t> ready = sealAnswer(a.root.secret, adm.hello, adm.challenge, kReady, {});
    CHORUS_RETURN_IF_ERROR(
        sendFrame(adm.sock.fd(), kReady, ready.data(), ready.size(), a.deadline)
            .withContext("telling rank " + std::to_string(r) + " the bootstrap is ready"));
    auto link = std::make_unique<PeerLink>();
    link->rank = r;
    link->who = {adm.hello.pid, adm.hello.host};
    link->sock = std::move(adm.sock);
    (*peers)[r] = std::move(link);
  }
  return Status::Ok();
}

Status joinStar(const Attempt& a, const Table& table,
                std::vector<std::unique_ptr<PeerLink>>* peers) {
  std::string where = "rank 0's bootstrap listener at " + table.starAddr.toString();
  auto link = std::make_unique<PeerLink>();
  link->rank = 0;
  link->who = table.rank0;
  auth::Nonce challenge;
  CHORUS_RETURN_IF_ERROR(greet(a, table.starAddr, where,
                               "Rank 0 advertised this address; check that this host can reach it "
                               "(firewall, CHORUS_SOCKET_IFNAME on rank 0)",
                               &link->sock, &link->reader, &challenge,
                               FrameReader().maxPayload()));  // it carries the collectives later
  Hello h = a.hello();
  CHORUS_RETURN_IF_ERROR(signHello(&h, a.root.secret, challenge));
  std::vector<uint8_t> payload = encodeHello(h);
  CHORUS_RETURN_IF_ERROR(
      sendFrame(link->sock.fd(), kHello, payload.data(), payload.size(), a.deadline)
          .withContext("saying hello to " + where));
  Frame f;
  Status st = recvFrame(link->sock.fd(), &link->reader, a.deadline, &f);
  if (st.code() == StatusCode::Timeout)  // rank 0's word on who is missing may be on its way
    st = recvFrame(link->sock.fd(), &link->reader, Deadline::after(kVerdictGraceSec), &f);
  if (st.code() == StatusCode::Timeout)
    return Status::Timeout("timed out after " + secondsText(a.totalSec) +
                           " s waiting for rank 0 to hear from every rank");
  if (!st.ok())
    return Status::RemoteError(describeRank(0, table.rank0) +
                               " closed the connection during the bootstrap handshake (" +
                               st.message() + "); did it die?");
  if (f.type != kReady) return unexpectedFrame(f, where, "the ready message");
  std::vector<uint8_t> body;
  CHORUS_RETURN_IF_ERROR(openAnswer(a.root.secret, h, challenge, f, &body).withContext(where));
  (*peers)[0] = std::move(link);
  return Status::Ok();
}

Status connectImpl(const Attempt& a, std::unique_ptr<Bootstrap>* out) {
  Socket starListener;
  Table table;
  CHORUS_RETURN_IF_ERROR(meetRoot(a, &starListener, &table));
  std::vector<std::unique_ptr<PeerLink>> peers(a.size);
  if (a.rank == 0 && a.size > 1) CHORUS_RETURN_IF_ERROR(acceptStar(a, starListener, table, &peers));
  if (a.rank != 0) CHORUS_RETURN_IF_ERROR(joinStar(a, table, &peers));
  auto b = std::make_unique<StarBootstrap>(a.rank, a.size, a.root.secret, a.root.weakSecret,
                                           std::move(peers));
  CHORUS_RETURN_IF_ERROR(b->start());
  LOG_TRACE(kLogBoot, "rank %d of %d: bootstrap connected", a.rank, a.size);
  *out = std::move(b);
  return Status::Ok();
}

}  // namespace
}  // namespace boot

Status Bootstrap::connect(const UniqueId& id, int rank, int size, Deadline deadline,
                          std::unique_ptr<Bootstrap>* out) {
  if (!out) return Status::InvalidArgument("Bootstrap::connect: null output");
  if (size < 1 || rank < 0 || rank >= size)
    return Status::InvalidArgument("Bootstrap::connect: rank " + std::to_string(rank) +
                                   " is not in [0, size) for size " + std::to_string(size));
  boot::RootInfo root;
  CHORUS_RETURN_IF_ERROR(boot::decodeUniqueId(id, &root));
  double total = std::max<double>(0, double(deadline.remainingNs()) / 1e9);
  boot::Attempt a{rank, size, root, deadline, total};
  return boot::connectImpl(a, out).withContext("rank " + std::to_string(rank) + " of " +
                                               std::to_string(size));
}

}  // namespace chorus
