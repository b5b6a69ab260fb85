// Gathers the HELLOs of a set of ranks on one listening socket, vetting each connection: the
// root uses it for all ranks, rank 0 for ranks 1..n-1 joining its star. Each connection gets a
// fresh challenge at once; anything that is not a well-formed HELLO proving this job's secret
// over it, within a short per-connection deadline, for a free rank in range, is told why (when
// it can be), closed and logged; the collection goes on.
//
// Unvetted connections are cheap and capped, per source address and in all, so strangers
// cannot hold the slots real ranks need: a rank turned away before its challenge retries
// (connect.cc). When accept itself fails (no descriptors left) the listener rests, with a
// growing pause, instead of spinning on it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bootstrap/wire.h"
#include "common/accept_backoff.h"
#include "common/socket.h"
#include "common/warn_limiter.h"

namespace chorus::boot {

struct Admitted {
  Socket sock;
  Hello hello;
  SockAddr peer;
  auth::Nonce challenge;  // what the HELLO answered; the listener's reply must cover it
};

class HelloCollector {
 public:
  struct Rules {
    const uint8_t* secret = nullptr;
    int firstRank = 0;  // 0 at the root, 1 at rank 0's star
    int size = 0;       // 0: learned from the first valid HELLO
    std::string where;  // "bootstrap root 10.0.0.5:41234", for messages and logs
  };

  HelloCollector(int listenFd, Rules rules);
  // Runs until every rank in [firstRank, size) has checked in (Ok) or `deadline` (Timeout).
  Status run(Deadline deadline);

  int size() const { return size_; }
  int admittedCount() const;
  std::vector<int> missing() const;
  // Indexed by rank.
  std::vector<std::optional<Admitted>>& admitted() { return admitted_; }

 private:
  struct Pending {
    Socket sock;
    SockAddr peer;
    auth::Nonce challenge{};
    FrameReader reader{kMaxHandshakeFrame};
    Deadline deadline = Deadline::after(kHelloTimeoutSec);
  };

  bool complete() const;
  void acceptNew();
  // Why a new connection from `peer` is turned away before its challenge, or "".
  std::string overCapacity(const SockAddr& peer) const;
  bool challenge(Pending& p);
  // Returns true when the pending connection is finished with (admitted or rejected).
  bool servePending(Pending& p);
  void vet(Pending& p, const Frame& f);
  Status admissible(const Hello& h) const;
  void reject(Socket& sock, const SockAddr& peer, int rank, const Status& why);
  void watchAdmitted(int rank);

  int listenFd_;
  Rules rules_;
  int size_ = 0;
  int sizeFrom_ = -1;  // the rank whose HELLO fixed size_
  std::vector<Pending> pending_;
  AcceptBackoff acceptBackoff_;
  WarnLimiter dropWarnings_;      // accept failures and connections turned away unvetted
  WarnLimiter strangerWarnings_;  // connections that failed the vetting
  std::vector<std::optional<Admitted>> admitted_;
};

}  // namespace chorus::boot
