// One lane: a reliable-connected queue pair towards one peer, its ring of posted receives
// (a write with immediate data consumes one at the target), and the contexts of its writes in
// flight. An RC queue pair completes its sends in the order they were posted, and the number
// in flight never exceeds the send queue's depth, so slot `posted % depth` is free whenever
// fewer than `depth` are outstanding.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "chorus/status.h"
#include "transport/rdma/verbs_blob.h"
#include "transport/rdma/verbs_device.h"
#include "transport/rdma/verbs_library.h"

namespace chorus {

struct VerbsLane {
  VerbsLane(int peer, int lane, uint32_t index, int depth)
      : peer(peer),
        lane(lane),
        index(index),
        depth(depth),
        contexts(new std::atomic<void*>[depth]) {}

  const int peer;
  const int lane;
  const uint32_t index;  // in the NIC's lane table; goes into every work request id
  const int depth;       // writes in flight, and receives posted
  ibv_qp* qp = nullptr;
  std::atomic<bool> connected{false};

  std::mutex postMutex;  // a write's slot and its ibv_post_send happen in one order
  uint64_t posted = 0;   // writes posted so far; guarded by postMutex
  std::unique_ptr<std::atomic<void*>[]> contexts;  // written before posting, read at completion
  std::atomic<int> outstanding{0};

  // The first failure seen on this queue pair: once one WR fails, the QP is in the error
  // state and every later one is flushed, so later errors repeat this one.
  std::atomic<bool> broken{false};
  std::mutex errorMutex;
  std::string error;
  void fail(const std::string& why);
  std::string firstError();
};

// Creates the queue pair of `lane`, moves it to INIT and posts its receives.
Status createLaneQp(const VerbsLibrary& lib, const VerbsPort& port, ibv_pd* pd, ibv_cq* cq,
                    int maxGather, VerbsLane* lane);
// Posts `count` receives (no scatter entries: a write's data goes where the write names, only
// its immediate data comes through the receive).
int postLaneReceives(VerbsLane* lane, int count);
// INIT -> RTR -> RTS towards `remoteQpn` of the peer described by `peer`.
Status connectLaneQp(const VerbsLibrary& lib, const VerbsPort& port, const VerbsEndpointInfo& peer,
                     uint32_t remoteQpn, int trafficClass, double timeoutSec, VerbsLane* lane);

}  // namespace chorus
