// The one wake-up of a rank: its executor sleeps on a doorbell when nothing moves, and every
// transport rings it when something arrives for it, from its own thread (TCP's progress
// thread) or from another process (a shared-memory peer). The communicator owns one and lends
// it to its executor and to every transport it creates.
#pragma once

#include <atomic>
#include <cstdint>

#include "transport/futex.h"

namespace chorus {

// The word a rank sleeps on. It sleeps on `seq` after raising `sleeping`; whoever makes work
// for it bumps `seq` and wakes it only when `sleeping` is up, so the common spinning case
// costs no system call. Plain data, so that it can live in memory shared between processes.
struct alignas(64) DoorbellWord {
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleeping;

  // For a ringer whose last store, which published the work, was seq_cst: either the sleeper
  // sees that work when it re-checks after raising `sleeping`, or we see `sleeping` here.
  void ringAfterSeqCstStore() {
    if (sleeping.load(std::memory_order_seq_cst)) wake();
  }
  void wake() {
    seq.fetch_add(1, std::memory_order_seq_cst);
    futexWakeAll(&seq);
  }
};

class Doorbell {
 public:
  Doorbell() { own_.seq.store(0), own_.sleeping.store(0); }
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;

  // The word starts in this object. A transport whose peers in other processes ring it moves
  // it into memory they share (nullptr moves it back), during set-up or teardown, while no one
  // sleeps or rings. The futex is process-shared, so either place works alike.
  void placeIn(DoorbellWord* shared) { word_.store(shared ? shared : &own_); }

  // Executor: token = prepareSleep(); if (still nothing to do) sleep(token, ns); endSleep().
  // Anything rung after prepareSleep() makes sleep() return at once.
  uint32_t prepareSleep() {
    DoorbellWord* w = word_.load(std::memory_order_relaxed);
    w->sleeping.store(1, std::memory_order_seq_cst);
    return w->seq.load(std::memory_order_seq_cst);
  }
  void sleep(uint32_t token, int64_t timeoutNs) {
    futexWait(&word_.load(std::memory_order_relaxed)->seq, token, timeoutNs);
  }
  void endSleep() { word_.load(std::memory_order_relaxed)->sleeping.store(0); }

  // Any thread, after publishing work for the executor with any memory order.
  void ring() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    word_.load(std::memory_order_relaxed)->ringAfterSeqCstStore();
  }
  // Any thread: wakes a sleeper unconditionally (a failure, an abort).
  void wake() { word_.load(std::memory_order_relaxed)->wake(); }

 private:
  DoorbellWord own_;
  std::atomic<DoorbellWord*> word_{&own_};
};

}  // namespace chorus
