// shrink: the survivors of a failure make a new communicator without the dead. A split cannot:
// it exchanges over the parent's bootstrap, whose hub may be dead and whose collectives wait
// for every rank. Instead each rank reserved a port at init (Impl::recoveryListener) and told
// the others which (exchangeHosts); the first survivor listens on it now, the others retry
// their connection until it does, and they meet there with a
// secret derived from the parent's and the excluded list, which only they can compute.
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "bootstrap/auth.h"
#include "bootstrap/unique_id_codec.h"
#include "core/comm_impl.h"

namespace chorus {

Status Communicator::shrink(const std::vector<int>& exclude, const Config& config,
                            std::unique_ptr<Communicator>* out) {
  if (!out) return Status::InvalidArgument("shrink: out is null");
  out->reset();
  Impl& me = *impl_;
  std::vector<int> excluded = exclude;
  std::sort(excluded.begin(), excluded.end());
  for (size_t i = 0; i < excluded.size(); ++i) {
    if (excluded[i] < 0 || excluded[i] >= me.size)
      return Status::InvalidArgument("shrink: excluded rank " + std::to_string(excluded[i]) +
                                     " is outside [0, " + std::to_string(me.size) + ")");
    if (i && excluded[i] == excluded[i - 1])
      return Status::InvalidArgument("shrink: rank " + std::to_string(excluded[i]) +
                                     " is excluded twice");
  }
  if (int(excluded.size()) >= me.size)
    return Status::InvalidArgument("shrink: the list excludes every rank");
  if (std::binary_search(excluded.begin(), excluded.end(), me.rank)) return Status::Ok();

  std::vector<int> members;
  for (int r = 0; r < me.size; ++r)
    if (!std::binary_search(excluded.begin(), excluded.end(), r)) members.push_back(r);
  const int root = members[0];
  const int newRank = int(std::find(members.begin(), members.end(), me.rank) - members.begin());
  if (size_t(root) >= me.recoveryAddrs.size() || !me.recoveryAddrs[size_t(root)].valid())
    return Status::Internal("shrink: no recovery address of rank " + std::to_string(root));

  // Only the survivors know both the parent's secret and the list they agreed on.
  std::vector<int32_t> list(excluded.begin(), excluded.end());
  const int32_t epoch = me.shrinks;
  const auth::Mac derived =
      auth::computeMac(me.bootstrap->secret(), "chorus shrink",
                       {{list.data(), list.size() * sizeof(int32_t)}, {&epoch, sizeof epoch}});
  UniqueId id{};
  if (me.rank == root) {
    if (!me.recoveryListener.valid())
      return Status::InvalidUsage(
          "shrink: this communicator was shrunk already; shrink the communicator that "
          "shrink returned instead");
    if (listen(me.recoveryListener.fd(), 1024) != 0)
      return Status::FromErrno(errno, "shrink: listening on the recovery port");
    CHORUS_RETURN_IF_ERROR(startRootOn(std::move(me.recoveryListener), derived.data(),
                                       me.bootstrap->weakSecret(), config.timeoutSec, &id)
                               .withContext("shrink"));
  } else {
    boot::encodeUniqueId(me.recoveryAddrs[size_t(root)], derived.data(), me.bootstrap->weakSecret(),
                         &id);
  }
  ++me.shrinks;
  return create(id, newRank, int(members.size()), config, out)
      .withContext("shrink of rank " + std::to_string(me.rank) + " (new rank " +
                   std::to_string(newRank) + " of " + std::to_string(members.size()) +
                   ", meeting at rank " + std::to_string(root) + ")");
}

}  // namespace chorus
