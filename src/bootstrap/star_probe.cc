// Rank 0's check of which ranks still answer. A rank that is stopped, hung in the kernel or cut
// off from the network keeps its connections open, so only a question it cannot answer tells
// it from a slow one. After a timeout a rank asks rank 0 (kProbeAsk); rank 0 pings every rank
// still in the job and, once all answered or kProbeWindowSec passed, sends its finding to the
// ranks that asked and, if a rank did not answer, names it to every rank as the failure. The
// service threads do all of it, so a rank blocked in a collective still answers.
#include <unistd.h>

#include "bootstrap/star.h"
#include "common/log.h"

namespace chorus::boot {
namespace {

// A live service thread answers within milliseconds; a loaded machine may not run it at once.
constexpr double kProbeWindowSec = 0.5;
// How long a caller waits for the finding: the window, and the way there and back.
constexpr double kFindingWaitSec = kProbeWindowSec + kVerdictGraceSec;

}  // namespace

Status StarBootstrap::findUnresponsive() {
  if (size_ == 1) return Status::Ok();
  std::unique_lock<std::mutex> lock(probeMu_);
  const uint64_t seen = findings_;
  if (rank_ == 0) {
    probeWanted_ = true;
    uint64_t one = 1;
    (void)!write(wakeFd_, &one, sizeof one);
  } else {
    lock.unlock();
    (void)send(0, kProbeAsk, nullptr, 0, Deadline::after(kVerdictGraceSec));
    lock.lock();
  }
  const auto wait = std::chrono::duration<double>(kFindingWaitSec);
  if (probeCv_.wait_for(lock, wait, [&] { return findings_ != seen; })) return finding_;
  lock.unlock();
  // Rank 0 may have left or told of a failure meanwhile, which is no silence.
  if (rank_ == 0 || hasLeft(0) || !firstFailure().ok()) return Status::Ok();
  return Status::RemoteError(describeRank(0, peers_[0]->who) +
                             " is not responding: it did not answer this rank within " +
                             secondsText(kFindingWaitSec) +
                             " s after a timeout (is it stopped, hung, or cut off from the "
                             "network?)");
}

void StarBootstrap::handleProbeFrame(PeerLink& p, const Frame& f) {
  const bool toRankZero = f.type == kProbeAsk || f.type == kPong;
  if (toRankZero != (rank_ == 0))
    return peerClosed(p, Status::Internal("it sent probe message type " + std::to_string(f.type) +
                                          " to the wrong rank"));
  Reader r(f.payload);
  if (f.type == kProbeAsk) {
    askers_.push_back(p.rank);
    if (!probing_) startProbe();
  } else if (f.type == kPing) {
    (void)send(0, kPong, f.payload.data(), f.payload.size(), Deadline::after(kVerdictGraceSec));
  } else if (f.type == kPong) {
    uint64_t id = 0;
    if (probing_ && r.u64(&id) && id == probeId_) answered_[size_t(p.rank)] = true;
  } else {
    int32_t silent = -1;
    Status finding;
    if (r.i32(&silent) && silent >= 0)
      finding = decodeError(std::vector<uint8_t>(r.rest(), r.rest() + r.left()));
    publishFinding(finding);
  }
}

void StarBootstrap::takeProbeRequest() {
  {
    std::lock_guard<std::mutex> lock(probeMu_);
    if (!probeWanted_) return;
    probeWanted_ = false;
  }
  if (!probing_) startProbe();
}

void StarBootstrap::startProbe() {
  probing_ = true;
  ++probeId_;
  answered_.assign(size_t(size_), true);
  Writer w;
  w.u64(probeId_);
  const Deadline d = Deadline::after(0.2);
  for (auto& q : peers_) {
    if (!q || !q->open || q->saidGoodbye) continue;  // the dead are known, the gone are fine
    answered_[size_t(q->rank)] = false;
    (void)send(q->rank, kPing, w.buffer().data(), w.buffer().size(), d);
  }
  probeEnds_ = Deadline::after(kProbeWindowSec);
}

bool StarBootstrap::probeSettled() const {
  if (probeEnds_.expired()) return true;
  for (bool a : answered_)
    if (!a) return false;
  return true;
}

int StarBootstrap::pollTimeoutMs() const {
  return probing_ ? probeEnds_.remainingMs() + 1 : -1;
}

void StarBootstrap::finishProbe() {
  probing_ = false;
  std::vector<int> silent;
  for (int r = 0; r < size_; ++r)
    if (!answered_[size_t(r)] && peers_[size_t(r)]->open) silent.push_back(r);
  Status finding;
  Writer w;
  w.u32(uint32_t(silent.empty() ? -1 : silent[0]));
  if (!silent.empty()) {
    const std::vector<int> others(silent.begin() + 1, silent.end());
    finding = Status::RemoteError(
        describeRank(silent[0], peers_[size_t(silent[0])]->who) +
        " is not responding: it did not answer rank 0 within " + secondsText(kProbeWindowSec) +
        " s after a rank timed out" +
        (others.empty() ? ""
                        : ", nor did " + std::string(others.size() == 1 ? "rank " : "ranks ") +
                              formatRankList(others)) +
        " (is it stopped, hung, or cut off from the network?)");
    const std::vector<uint8_t> err = encodeError(finding);
    w.bytes(err.data(), err.size());
  }
  const Deadline d = Deadline::after(0.2);
  for (int a : askers_)
    if (peers_[size_t(a)]->open)
      (void)send(a, kProbeFinding, w.buffer().data(), w.buffer().size(), d);
  askers_.clear();
  if (!finding.ok()) peerFailed(silent[0], finding);
  publishFinding(finding);
}

void StarBootstrap::publishFinding(const Status& finding) {
  {
    std::lock_guard<std::mutex> lock(probeMu_);
    finding_ = finding;
    ++findings_;
  }
  probeCv_.notify_all();
}

}  // namespace chorus::boot
