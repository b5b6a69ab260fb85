// Bootstrap: how the ranks of one job meet and talk before (and beside) the data transports.
//
// Rendezvous: every rank connects to the root named in the UniqueId, proves it knows the job
// secret, and learns rank 0's address. Afterwards ranks 1..n-1 each keep one TCP connection to
// rank 0 (a star). The star carries small control exchanges (allgather, broadcast, barrier,
// used by transports to swap addresses) and failure notices: a per-communicator service thread
// watches the sockets, so when a process dies its connection closes, rank 0 notices at once
// and tells every survivor which rank died. A rank that leaves cleanly says goodbye first, so
// a clean exit is not mistaken for a death.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "chorus/status.h"
#include "chorus/unique_id.h"
#include "common/clock.h"
#include "common/socket.h"

namespace chorus {

inline constexpr size_t kSecretBytes = 32;

// Builds a UniqueId for a root at host:port (rank 0 of an environment-initialised job starts it
// with startRoot). `secret` is kSecretBytes long. `weakSecret`: it was derived from what others
// can see too (the root address, the job id), so it protects nothing beyond this host and every
// listener of the job must stay on loopback (Bootstrap::weakSecret).
Status makeUniqueId(const std::string& host, int port, const uint8_t* secret, bool weakSecret,
                    UniqueId* out);
// Starts a root thread listening on the address in `id` (port 0 = any; `id` is updated).
Status startRoot(UniqueId* id, double timeoutSec);
// Starts a root thread on a socket already listening (a communicator's recovery listener, bound
// at init so that survivors know its address) for a job with `secret`; writes its unique id.
Status startRootOn(Socket listener, const uint8_t* secret, bool weakSecret, double timeoutSec,
                   UniqueId* id);
// "10.0.0.1:29500" or "[fe80::1]:29500", for messages.
std::string uniqueIdAddress(const UniqueId& id);

class Bootstrap {
 public:
  // Called from the service thread, at most once per communicator, with the first failure
  // seen: a peer died (its connection closed without goodbye), rank 0 relayed another rank's
  // death, or a peer called reportError. The message names the failed rank.
  using FailureHandler = std::function<void(const Status&)>;

  // Connects as `rank` of `size` through the root in `id`. Fails with a clear error (wrong
  // secret, unreachable root, a rank missing, duplicate rank, size mismatch) by `deadline`.
  static Status connect(const UniqueId& id, int rank, int size, Deadline deadline,
                        std::unique_ptr<Bootstrap>* out);
  virtual ~Bootstrap() = default;  // implementations say goodbye and join their thread

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const uint8_t* secret() const = 0;  // kSecretBytes, for transport handshakes
  // The secret is derived, not secret (makeUniqueId): listeners must stay on loopback.
  virtual bool weakSecret() const = 0;
  // This rank's address on the interface the bootstrap uses (port 0), where a listener of its
  // own is reachable by the other ranks.
  virtual SockAddr localAddress() const = 0;

  // All ranks call these in the same order. `all` receives size() * bytes, rank-major.
  virtual Status allgather(const void* mine, size_t bytes, void* all, Deadline deadline) = 0;
  virtual Status broadcast(void* data, size_t bytes, int root, Deadline deadline) = 0;
  virtual Status barrier(Deadline deadline) = 0;

  // True once `rank` has left the job cleanly (destroyed its communicator). Rank 0 relays every
  // goodbye, so each rank learns of it within a round trip. A clean exit is not a failure, but
  // waiting for data from a rank that has left is: the data can no longer come.
  virtual bool hasLeft(int rank) const = 0;

  virtual void setFailureHandler(FailureHandler handler) = 0;
  // The first failure seen so far (as the handler gets it), or Ok.
  virtual Status firstFailure() = 0;
  // Tells every other rank that this rank failed with `status` (their handlers run with a
  // message naming this rank). Non-blocking best effort.
  virtual void reportError(const Status& status) = 0;
  // After a timeout: has rank 0 ask every rank over the bootstrap to answer (a stopped, hung or
  // cut-off process cannot, however open its sockets look) and waits about a second at most.
  // Returns the failure naming a rank that did not answer, which rank 0 also sends every other
  // rank, or Ok when all answered. Rank 0 not answering this rank is such a failure too.
  virtual Status findUnresponsive() = 0;
};

}  // namespace chorus
