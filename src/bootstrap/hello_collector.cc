#include "bootstrap/hello_collector.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

#include "common/log.h"

namespace chorus::boot {

namespace {
// Strangers can open connections faster than they time out; beyond this many unvetted ones
// new connections are closed at once, so the fd table cannot be exhausted. Per source address
// the cap is lower, so one host cannot take every slot; a real rank that is turned away
// retries, and its retry gets in once the stranger's connections time out.
constexpr size_t kMaxPending = 256;
constexpr size_t kMaxPendingPerSource = 16;
}  // namespace

HelloCollector::HelloCollector(int listenFd, Rules rules)
    : listenFd_(listenFd), rules_(std::move(rules)) {
  size_ = rules_.size;
  if (size_ > 0) admitted_.resize(size_);
}

int HelloCollector::admittedCount() const {
  return int(std::count_if(admitted_.begin(), admitted_.end(),
                           [](const auto& a) { return a.has_value(); }));
}

std::vector<int> HelloCollector::missing() const {
  std::vector<int> out;
  for (int r = rules_.firstRank; r < size_; ++r)
    if (!admitted_[r]) out.push_back(r);
  return out;
}

bool HelloCollector::complete() const {
  return size_ > 0 && missing().empty();
}

Status HelloCollector::run(Deadline deadline) {
  while (!complete()) {
    if (deadline.expired()) return Status::Timeout(rules_.where + ": timed out");
    // A resting listener (accept ran out of descriptors) is left out of the poll set.
    std::vector<pollfd> fds{{acceptBackoff_.ready() ? listenFd_ : -1, POLLIN, 0}};
    int waitMs = deadline.remainingMs();
    if (!acceptBackoff_.ready()) waitMs = std::min(waitMs, acceptBackoff_.restMs());
    for (const Pending& p : pending_) {
      fds.push_back({p.sock.fd(), POLLIN, 0});
      waitMs = std::min(waitMs, p.deadline.remainingMs());
    }
    std::vector<int> watched;
    for (int r = 0; r < int(admitted_.size()); ++r) {
      if (!admitted_[r]) continue;
      fds.push_back({admitted_[r]->sock.fd(), POLLIN, 0});
      watched.push_back(r);
    }
    if (poll(fds.data(), fds.size(), waitMs) < 0 && errno != EINTR)
      return Status::FromErrno(errno, rules_.where + ": poll");
    // Admitted ranks first and pending in reverse, so erasing keeps the indices valid.
    size_t base = 1 + pending_.size();
    for (size_t i = 0; i < watched.size(); ++i)
      if (fds[base + i].revents) watchAdmitted(watched[i]);
    for (size_t i = pending_.size(); i-- > 0;)
      if ((fds[1 + i].revents || pending_[i].deadline.expired()) && servePending(pending_[i]))
        pending_.erase(pending_.begin() + i);
    if (fds[0].revents & POLLIN) acceptNew();
  }
  return Status::Ok();
}

void HelloCollector::acceptNew() {
  for (int i = 0; i < 64; ++i) {
    Pending p;
    bool got = false;
    int err = 0;
    Status st = acceptOne(listenFd_, &p.sock, &p.peer, &got, &err);
    if (!st.ok()) {
      if (AcceptBackoff::isExhaustion(err)) acceptBackoff_.failed();
      LOG_WARN_LIMITED(dropWarnings_, kLogBoot, "%s: %s; the listener pauses %lld ms",
                       rules_.where.c_str(), st.message().c_str(),
                       (long long)(acceptBackoff_.pauseNs() / 1000000));
      return;
    }
    if (!got) return;
    acceptBackoff_.succeeded();
    std::string why = overCapacity(p.peer);
    if (!why.empty()) {
      LOG_WARN_LIMITED(dropWarnings_, kLogBoot, "%s: dropping connection from %s: %s",
                       rules_.where.c_str(), p.peer.toString().c_str(), why.c_str());
      continue;
    }
    p.deadline = Deadline::after(kHelloTimeoutSec);
    if (challenge(p)) pending_.push_back(std::move(p));
  }
}

std::string HelloCollector::overCapacity(const SockAddr& peer) const {
  if (pending_.size() >= kMaxPending)
    return std::to_string(pending_.size()) + " connections are already waiting to say hello";
  std::string host = peer.host();
  size_t same = size_t(std::count_if(pending_.begin(), pending_.end(),
                                     [&](const Pending& q) { return q.peer.host() == host; }));
  if (same >= kMaxPendingPerSource)
    return std::to_string(same) + " connections from that address are already waiting";
  return "";
}

// The fresh socket's buffer is empty, so the small frame goes out at once.
bool HelloCollector::challenge(Pending& p) {
  Status st = auth::randomNonce(&p.challenge);
  if (st.ok())
    st = sendFrame(p.sock.fd(), kChallenge, p.challenge.data(), p.challenge.size(),
                   Deadline::after(0.2));
  if (st.ok()) return true;
  LOG_WARN_LIMITED(dropWarnings_, kLogBoot, "%s: could not challenge %s: %s", rules_.where.c_str(),
                   p.peer.toString().c_str(), st.message().c_str());
  return false;
}

bool HelloCollector::servePending(Pending& p) {
  bool closed = false;
  Status st = p.reader.readAvailable(p.sock.fd(), &closed);
  Frame f;
  bool got = false;
  if (st.ok()) st = p.reader.next(&f, &got);
  if (!st.ok()) {
    reject(p.sock, p.peer, -1, st);
    return true;
  }
  if (got) {
    vet(p, f);
    return true;
  }
  if (closed) {
    LOG_WARN_LIMITED(strangerWarnings_, kLogBoot,
                     "%s: connection from %s closed before saying hello (a stranger or a "
                     "port scan; ignored)",
                     rules_.where.c_str(), p.peer.toString().c_str());
    return true;
  }
  if (p.deadline.expired()) {
    reject(p.sock, p.peer, -1,
           Status::Timeout("no HELLO within " + std::to_string(int(kHelloTimeoutSec)) + " s"));
    return true;
  }
  return false;
}

void HelloCollector::vet(Pending& p, const Frame& f) {
  Hello h;
  Status st = f.type == kHello ? decodeHello(f.payload, &h)
                               : Status::InvalidArgument("first message was not a HELLO");
  if (st.ok()) st = checkHelloCredentials(h, rules_.secret, p.challenge);
  if (st.ok()) st = admissible(h);
  if (!st.ok()) {
    reject(p.sock, p.peer, st.code() == StatusCode::InvalidArgument ? h.rank : -1, st);
    return;
  }
  if (size_ == 0) {
    size_ = h.size;
    sizeFrom_ = h.rank;
    admitted_.resize(size_);
  }
  LOG_TRACE(kLogBoot, "%s: %s checked in from %s", rules_.where.c_str(),
            describeRank(h.rank, {h.pid, h.host}).c_str(), p.peer.toString().c_str());
  int rank = h.rank;
  admitted_[rank] = Admitted{std::move(p.sock), std::move(h), p.peer, p.challenge};
}

Status HelloCollector::admissible(const Hello& h) const {
  if (h.size < 1)
    return Status::InvalidArgument("job size " + std::to_string(h.size) + " is not positive");
  if (size_ > 0 && h.size != size_)
    return Status::InvalidArgument(
        "rank " + std::to_string(h.rank) + " says the job has " + std::to_string(h.size) +
        " ranks, but " + (sizeFrom_ >= 0 ? "rank " + std::to_string(sizeFrom_) : "this job") +
        " said " + std::to_string(size_) + "; every rank must be given the same size");
  int size = size_ > 0 ? size_ : h.size;
  if (h.rank < rules_.firstRank || h.rank >= size)
    return Status::InvalidArgument("rank " + std::to_string(h.rank) + " is out of range [" +
                                   std::to_string(rules_.firstRank) + ", " + std::to_string(size) +
                                   ")");
  if (size_ > 0 && admitted_[h.rank]) {
    const Admitted& a = *admitted_[h.rank];
    return Status::InvalidArgument(
        "duplicate rank: " + describeRank(h.rank, {a.hello.pid, a.hello.host}) +
        " already checked in from " + a.peer.toString() +
        "; were two processes given the same rank?");
  }
  if (rules_.firstRank == 0 && h.rank == 0 && h.size > 1 && !h.starAddr.valid())
    return Status::InvalidArgument("rank 0 sent no listener address");
  return Status::Ok();
}

void HelloCollector::reject(Socket& sock, const SockAddr& peer, int rank, const Status& why) {
  std::string who = rank >= 0 ? "rank " + std::to_string(rank) : "connection";
  Status told(
      why.code() == StatusCode::Timeout ? StatusCode::Timeout : StatusCode::InvalidArgument,
      rules_.where + " rejected " + who + " from " + peer.toString() + ": " + why.message());
  LOG_WARN_LIMITED(strangerWarnings_, kLogBoot, "%s (the job goes on)", told.message().c_str());
  sendErrorFrame(sock.fd(), told);
  sock.reset();
}

void HelloCollector::watchAdmitted(int rank) {
  Admitted& a = *admitted_[rank];
  char byte;
  ssize_t n = recv(a.sock.fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n > 0) {
    reject(a.sock, a.peer, rank,
           Status::InvalidArgument("sent data before the rendezvous was complete"));
  } else {
    // Its process most likely died or gave up; a restarted one may take the slot.
    LOG_WARN(kLogBoot, "%s: %s disconnected before all ranks arrived; its slot is free again",
             rules_.where.c_str(), describeRank(rank, {a.hello.pid, a.hello.host}).c_str());
  }
  admitted_[rank].reset();
}

}  // namespace chorus::boot
