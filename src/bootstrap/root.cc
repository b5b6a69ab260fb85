// The bootstrap root: a detached thread that waits for every rank's HELLO, then tells each
// where rank 0's star listener is and exits. It never touches the data path, so the job does
// not depend on it after the rendezvous.
#include <unistd.h>

#include <array>
#include <cstring>
#include <system_error>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/hello_collector.h"
#include "bootstrap/unique_id_codec.h"
#include "bootstrap/wire.h"
#include "common/log.h"

namespace chorus {
namespace boot {
namespace {

// Ranks in this process last: the root usually lives in rank 0's process, and rank 0 may exit
// as soon as it has its answer, which would cut the others off before theirs was sent.
std::vector<Admitted*> answerOrder(HelloCollector& c) {
  std::vector<Admitted*> out;
  for (int pass = 0; pass < 2; ++pass)
    for (auto& a : c.admitted())
      if (a && (a->hello.pid == getpid()) == (pass == 1)) out.push_back(&*a);
  return out;
}

void sendTables(HelloCollector& c, const uint8_t* secret, const std::string& where) {
  Admitted& r0 = *c.admitted()[0];
  Table t{r0.hello.starAddr, {r0.hello.pid, r0.hello.host}};
  std::vector<uint8_t> body = encodeTable(t);
  Deadline d = Deadline::after(5);
  for (Admitted* a : answerOrder(c)) {
    std::vector<uint8_t> payload = sealAnswer(secret, a->hello, a->challenge, kTable, body);
    Status st = sendFrame(a->sock.fd(), kTable, payload.data(), payload.size(), d);
    if (!st.ok())
      LOG_WARN(kLogBoot, "%s: could not send the table to rank %d: %s", where.c_str(),
               a->hello.rank, st.message().c_str());
  }
  LOG_INFO(kLogBoot, "%s: all %d ranks checked in; rank 0 listens at %s", where.c_str(), c.size(),
           t.starAddr.toString().c_str());
}

void reportTimeout(HelloCollector& c, const std::string& where, double timeoutSec) {
  if (c.size() == 0) {
    LOG_WARN(kLogBoot, "%s: timed out after %s s: no rank ever checked in", where.c_str(),
             secondsText(timeoutSec).c_str());
    return;
  }
  Status st = Status::Timeout(where + ": timed out after " + secondsText(timeoutSec) + " s with " +
                              std::to_string(c.admittedCount()) + " of " +
                              std::to_string(c.size()) + " ranks; " + missingRanks(c.missing()) +
                              ". Were all ranks started, with the same unique id?");
  LOG_WARN(kLogBoot, "%s", st.message().c_str());
  for (Admitted* a : answerOrder(c)) sendErrorFrame(a->sock.fd(), st);
}

void rootMain(Socket listener, std::array<uint8_t, kSecretBytes> secret, std::string where,
              double timeoutSec) {
  HelloCollector c(listener.fd(), {secret.data(), 0, 0, where});
  Status st = c.run(Deadline::after(timeoutSec));
  if (st.ok())
    sendTables(c, secret.data(), where);
  else if (st.code() == StatusCode::Timeout)
    reportTimeout(c, where, timeoutSec);
  else
    LOG_WARN(kLogBoot, "%s stopped: %s", where.c_str(), st.message().c_str());
}

// Binds the root's address. An environment-given address (MASTER_ADDR) may name this host by
// a name or address the kernel will not bind (behind NAT, a VIP); then listen on every
// interface at that port, as torchrun's store does.
Status listenForRoot(const SockAddr& addr, Socket* out) {
  Status st = listenOn(addr, 1024, out);
  if (st.ok() || addr.port() == 0) return st;
  // When the port itself is taken the wildcard bind fails too, and the first error is the
  // one that explains it.
  if (!listenOn(SockAddr::any(addr.family(), addr.port()), 1024, out).ok()) return st;
  LOG_INFO(kLogBoot, "%s; the bootstrap root listens on all interfaces at port %d instead",
           st.message().c_str(), addr.port());
  return Status::Ok();
}

}  // namespace
}  // namespace boot

Status startRoot(UniqueId* id, double timeoutSec) {
  if (!id) return Status::InvalidArgument("startRoot: null unique id");
  if (!(timeoutSec > 0)) return Status::InvalidArgument("startRoot: timeout must be positive");
  boot::RootInfo info;
  CHORUS_RETURN_IF_ERROR(boot::decodeUniqueId(*id, &info));
  Socket listener;
  CHORUS_RETURN_IF_ERROR(
      boot::listenForRoot(info.addr, &listener).withContext("could not start the bootstrap root"));
  const SockAddr asked = info.addr;
  CHORUS_RETURN_IF_ERROR(
      startRootOn(std::move(listener), info.secret, info.weakSecret, timeoutSec, id));
  if (asked.port() != 0)
    boot::encodeUniqueId(asked, info.secret, info.weakSecret, id);  // keep the name given
  return Status::Ok();
}

Status startRootOn(Socket listener, const uint8_t* secretBytes, bool weakSecret, double timeoutSec,
                   UniqueId* id) {
  if (!id || !secretBytes || !listener.valid())
    return Status::InvalidArgument("startRootOn: null argument or no listener");
  if (!(timeoutSec > 0)) return Status::InvalidArgument("startRoot: timeout must be positive");
  boot::RootInfo info;
  CHORUS_RETURN_IF_ERROR(localAddress(listener.fd(), &info.addr));
  boot::encodeUniqueId(info.addr, secretBytes, weakSecret, id);
  std::array<uint8_t, kSecretBytes> secret;
  memcpy(secret.data(), secretBytes, kSecretBytes);
  std::string where = "bootstrap root " + info.addr.toString();
  try {
    std::thread(boot::rootMain, std::move(listener), secret, where, timeoutSec).detach();
  } catch (const std::system_error& e) {
    return Status::SystemError("could not start the bootstrap root thread: " +
                               std::string(e.what()));
  }
  LOG_TRACE(kLogBoot, "%s started (timeout %g s)", where.c_str(), timeoutSec);
  return Status::Ok();
}

}  // namespace chorus
