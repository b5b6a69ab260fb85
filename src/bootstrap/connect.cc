// Bootstrap::connect: meet at the root, learn rank 0's address, then build the star.
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "bootstrap/hello_collector.h"
#include "bootstrap/star.h"
#include "bootstrap/unique_id_codec.h"
#include "bootstrap/wire.h"
#include "common/log.h"

namespace chorus {
namespace boot {
namespace {

std::string seconds(double s) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

struct Attempt {
  int rank;
  int size;
  const RootInfo& root;
  Deadline deadline;
  double totalSec;  // for messages: how long this connect was allowed

  Hello hello() const {
    Hello h;
    memcpy(h.secret, root.secret, kSecretBytes);
    h.rank = rank;
    h.size = size;
    PeerIdentity me = selfIdentity();
    h.pid = me.pid;
    h.host = me.host;
    return h;
  }
};

Status meetRoot(const Attempt& a, const Socket& starListener, Table* table) {
  std::string where = "bootstrap root at " + a.root.addr.toString();
  Socket s;
  int err = 0;
  if (!connectWithRetry(a.root.addr, a.deadline, &s, &err).ok())
    return Status::Timeout("could not reach " + where + " within " + seconds(a.totalSec) +
                           " s: " + strerror(err) +
                           ". Is rank 0 / the process that created the unique id running, and "
                           "is the address reachable? Set CHORUS_SOCKET_IFNAME to choose the "
                           "interface");
  Hello h = a.hello();
  if (starListener.valid()) {
    // Advertise the local address that reached the root: the others can most likely reach it.
    SockAddr local, bound;
    CHORUS_RETURN_IF_ERROR(localAddress(s.fd(), &local));
    CHORUS_RETURN_IF_ERROR(localAddress(starListener.fd(), &bound));
    local.setPort(bound.port());
    h.starAddr = local;
  }
  std::vector<uint8_t> payload = encodeHello(h);
  CHORUS_RETURN_IF_ERROR(sendFrame(s.fd(), kHello, payload.data(), payload.size(), a.deadline)
                             .withContext("saying hello to the " + where));
  FrameReader reader(kMaxHandshakeFrame);
  Frame f;
  Status st = recvFrame(s.fd(), &reader, a.deadline, &f);
  if (st.code() == StatusCode::Timeout)
    return Status::Timeout("timed out after " + seconds(a.totalSec) +
                           " s waiting for the other ranks to reach the " + where +
                           " (it has not heard from all " + std::to_string(a.size) + " ranks yet)");
  if (!st.ok())
    return Status::RemoteError("the " + where + " closed the connection without an answer (" +
                               st.message() + "); it may have exited or rejected this rank");
  if (f.type != kTable) return unexpectedFrame(f, "the " + where, "the rank table");
  return decodeTable(f.payload, table);
}

Status acceptStar(const Attempt& a, const Socket& listener, const Table& table,
                  std::vector<std::unique_ptr<PeerLink>>* peers) {
  // Named by the address it advertised (it listens on every interface).
  HelloCollector c(listener.fd(), {a.root.secret, 1, a.size,
                                   "rank 0's bootstrap listener " + table.starAddr.toString()});
  Status st = c.run(a.deadline);
  if (st.code() == StatusCode::Timeout) {
    st = Status::Timeout(
        "rank 0 timed out after " + seconds(a.totalSec) +
        " s waiting for ranks to connect to it; missing ranks: " + formatRankList(c.missing()) +
        " (they reached the bootstrap root, so they died since or cannot "
        "reach rank 0: check firewalls and CHORUS_SOCKET_IFNAME)");
    for (auto& adm : c.admitted())
      if (adm) sendErrorFrame(adm->sock.fd(), st);
  }
  CHORUS_RETURN_IF_ERROR(st);
  for (int r = 1; r < a.size; ++r) {
    Admitted& adm = *c.admitted()[r];
    CHORUS_RETURN_IF_ERROR(
        sendFrame(adm.sock.fd(), kReady, nullptr, 0, a.deadline)
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
  int err = 0;
  if (!connectWithRetry(table.starAddr, a.deadline, &link->sock, &err).ok())
    return Status::Timeout("could not reach " + where + " within " + seconds(a.totalSec) +
                           " s: " + strerror(err) +
                           ". Rank 0 advertised this address; check that this host can reach "
                           "it (firewall, CHORUS_SOCKET_IFNAME on rank 0)");
  std::vector<uint8_t> payload = encodeHello(a.hello());
  CHORUS_RETURN_IF_ERROR(
      sendFrame(link->sock.fd(), kHello, payload.data(), payload.size(), a.deadline)
          .withContext("saying hello to " + where));
  Frame f;
  Status st = recvFrame(link->sock.fd(), &link->reader, a.deadline, &f);
  if (st.code() == StatusCode::Timeout)
    return Status::Timeout("timed out after " + seconds(a.totalSec) +
                           " s waiting for rank 0 to hear from every rank");
  if (!st.ok())
    return Status::RemoteError(describeRank(0, table.rank0) +
                               " closed the connection during the bootstrap handshake (" +
                               st.message() + "); did it die?");
  if (f.type != kReady) return unexpectedFrame(f, where, "the ready message");
  (*peers)[0] = std::move(link);
  return Status::Ok();
}

Status connectImpl(const Attempt& a, std::unique_ptr<Bootstrap>* out) {
  Socket starListener;
  if (a.rank == 0 && a.size > 1)
    CHORUS_RETURN_IF_ERROR(listenOn(SockAddr::any(a.root.addr.family(), 0), 1024, &starListener)
                               .withContext("rank 0's bootstrap listener"));
  Table table;
  CHORUS_RETURN_IF_ERROR(meetRoot(a, starListener, &table));
  std::vector<std::unique_ptr<PeerLink>> peers(a.size);
  if (a.rank == 0 && a.size > 1) CHORUS_RETURN_IF_ERROR(acceptStar(a, starListener, table, &peers));
  if (a.rank != 0) CHORUS_RETURN_IF_ERROR(joinStar(a, table, &peers));
  auto b = std::make_unique<StarBootstrap>(a.rank, a.size, a.root.secret, std::move(peers));
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
