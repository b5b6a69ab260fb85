// split: ranks that pass the same color form a new communicator. Two exchanges over the
// parent's bootstrap: (color, key) from everyone, then the new group's unique id from its
// first member, which starts the new group's bootstrap root.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/comm_impl.h"

namespace chorus {

Status Communicator::split(int color, int key, const Config& config,
                           std::unique_ptr<Communicator>* out) {
  if (!out) return Status::InvalidArgument("split: out is null");
  out->reset();
  Impl& me = *impl_;
  if (me.failed.load()) return me.currentError().withContext("split refused");
  const Deadline deadline = Deadline::after(me.config.timeoutSec);
  struct ColorKey {
    int32_t color, key;
  } mine{color < 0 ? -1 : color, key}, *all = nullptr;
  std::vector<ColorKey> keys(me.size);
  all = keys.data();
  CHORUS_RETURN_IF_ERROR(
      me.bootstrap->allgather(&mine, sizeof mine, all, deadline).withContext("split"));

  std::vector<int> members;  // parent ranks in my color, in new-rank order
  for (int r = 0; r < me.size; ++r)
    if (mine.color >= 0 && all[r].color == mine.color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return all[a].key < all[b].key; });

  UniqueId id{};
  if (!members.empty() && members[0] == me.rank)
    CHORUS_RETURN_IF_ERROR(createUniqueId(&id, config.timeoutSec).withContext("split"));
  std::vector<UniqueId> ids(me.size);
  CHORUS_RETURN_IF_ERROR(
      me.bootstrap->allgather(&id, sizeof id, ids.data(), deadline).withContext("split"));
  if (members.empty()) return Status::Ok();  // no color: not part of any new communicator

  const int newRank = int(std::find(members.begin(), members.end(), me.rank) - members.begin());
  return create(ids[members[0]], newRank, int(members.size()), config, out);
}

}  // namespace chorus
