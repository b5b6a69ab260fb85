// Ready notices: how a rank that only sends to a peer during a collective learns that the peer
// is in the same call. Receivers check every header against their own call, so a mismatch is
// found where data arrives. But a rank that never hears from a peer it sends to (a broadcast
// root, a leaf of a reduce, every rank of a ring towards its successor) would return success
// before the peer could object; and two ranks that each only wait for the other (each the root
// of its own reduce) would wait until the deadline.
//
// So in every one-way pair the receiver, as its call starts, sends the sender a ready notice
// (a header-only message of kind kWireReady repeating its call), and the sender takes it before
// its call returns. The same call on both sides means the same schedule, so the receiver will
// take the sender's data. Anything else in the notice's place is a mismatch, reported by the
// rank that finds it: the sender, or a receiver that finds a notice where it waits for data.
// A pair that exchanges data both ways needs none: each side checks the other's headers, so a
// difference is found on both sides before either finishes.
//
// Point-to-point sends get no notices: an eager send returns before the receive is posted
// (MPI's semantics, which a send-then-receive on both ranks relies on); the receiver checks the
// byte count and a mismatch reaches the sender through the bootstrap.
#include "core/executor.h"

namespace chorus {

void findNoticeRoles(const Schedule& s, const ScheduleIndex& index, RunStart* start) {
  const size_t peers = index.peers().size();
  std::vector<uint8_t>& owes = start->owesNotice;
  std::vector<uint8_t>& awaits = start->awaitsNotice;
  owes.assign(peers, 0);    // for now: receives data from the peer
  awaits.assign(peers, 0);  // for now: sends data to the peer
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepKind kind = s.steps[i].kind;
    if (kind == StepKind::Copy || index.chunks(int(i)) == 0) continue;
    (kind == StepKind::Send ? awaits : owes)[size_t(index.channel(int(i)) >> 1)] = 1;
  }
  start->noticesOwed = start->noticesAwaited = 0;
  for (size_t k = 0; k < peers; ++k) {
    if (owes[k] && awaits[k]) owes[k] = awaits[k] = 0;  // both ways: none
    start->noticesOwed += owes[k];
    start->noticesAwaited += awaits[k];
  }
}

bool Executor::settleNotices(Status* err) {
  bool moved = false;
  const std::vector<int>& peers = index_->peers();
  for (size_t k = 0; k < peers.size(); ++k) {
    if (owesNotice_[k]) {
      WireHeader notice = expect_;
      notice.kind = kWireReady;
      notice.bytes = 0;
      if (env_.conns[size_t(peers[k])]->postSend(notice, MemRef::host(&expect_), nullptr)) {
        owesNotice_[k] = 0;
        --noticesOwed_;
        moved = true;
      }
    }
    if (awaitsNotice_[k]) {
      moved |= takeNotice(k, err);
      if (!err->ok()) return moved;
    }
  }
  return moved;
}

bool Executor::takeNotice(size_t slot, Status* err) {
  const int peer = index_->peers()[slot];
  Connection* c = env_.conns[size_t(peer)];
  const void* payload = nullptr;
  const WireHeader* h = c->peek(&payload);
  if (!h) return false;
  // The peer sends nothing else to this rank in this call, and its notice comes before
  // anything of its next call: whatever else is here, the peer is in another call.
  const bool matches = h->kind == kWireReady && h->bytes == 0 && h->count == expect_.count &&
                       h->opSeq == expect_.opSeq && h->coll == expect_.coll &&
                       h->dtype == expect_.dtype && h->root == expect_.root;
  if (!matches) {
    *err = mismatch(*h, peer, 0, 0, true);
    return false;
  }
  c->release();
  awaitsNotice_[slot] = 0;
  --noticesAwaited_;
  return true;
}

int Executor::awaitedNoticePeer() const {
  if (!noticesAwaited_) return -1;
  for (size_t k = 0; k < awaitsNotice_.size(); ++k)
    if (awaitsNotice_[k]) return index_->peers()[k];
  return -1;
}

}  // namespace chorus
