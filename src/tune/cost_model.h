// The cost model: predicts how long a set of schedules (one per rank) takes, by walking them
// with a link model instead of a network. It is a small discrete-event simulation of the
// executor:
// - Each step is cut into pieces (groups of its chunks, as algorithms/schedule_index.h cuts
//   them, at most maxPiecesPerStep) so that chunk pipelining shows; piece k of a step waits for
//   piece k-1, for the piece of a same-count dependency that holds its elements (chunkwise, as
//   the executor does: piece k when both are cut alike) or all of another dependency, for the
//   previous step on the same channel, and a receive for the matching send piece.
// - Each rank has one engine (the executor is one thread): it does its pieces one at a time.
//   Within a host a send costs bytes / link bandwidth on the sender (the copy into the shared
//   slot), a receive the same on the receiver, a receive-reduce bytes / reducer rate; every
//   chunk adds the executor's per-message overhead (Topology::stepOverheadUs).
// - Ports (placement.h): across hosts the bytes cross the NICs, and between GPUs whose NVLink
//   links the topology states, the GPUs' NVLink ports. A port is full duplex and shared by every
//   transfer through it; a transfer queues on the sender's port out and the receiver's in, each
//   at its rate (NIC: min(network estimate, speed x efficiency); NVLink: links x rate x
//   efficiency). The engine then only posts a send (a GPU rank's NIC with RDMA reads device
//   memory; NVLink bytes move by copy engine) and copies a receive out of its slot; a host rank
//   copies network bytes in and out itself. docs/simulator.md states the assumptions.
// - A message arrives one link latency (alpha) after its send piece finished.
// - More ranks than cores on a host stretch every engine's work and latency by ranks/cores.
// - Past the cache (Topology's memory line, once the buffers of a host's ranks outgrow it): the
//   rates above hold for data in cache; every byte that misses adds 1 / missGBs of engine time.
//   An operand a chunkwise dependency touched (a reduce of the segment the previous reduce just
//   wrote, the send of a block just received) misses by Topology::missFraction of its reuse
//   distance, the bytes the host's ranks touched in between; any other operand by missFraction
//   of the host's buffers. A write that misses costs twice (read for ownership, write-back).
//   The shared-memory slots are taken to stay in cache.
// - A send runs at most windowChunks messages ahead of its receive (the slots of a channel).
// Not modelled: contention for memory bandwidth
// between ranks of one host beyond what calibration folds into missGBs (measured with all
// calibrating ranks copying at once).
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"
#include "core/op_desc.h"
#include "topo/topology.h"

namespace chorus {

struct CostParams {
  size_t chunkBytes = 128 << 10;  // the transport's message size
  // The smallest message the selector may cut a schedule into (Schedule::chunkBytes), or 0:
  // every schedule keeps chunkBytes. Otherwise it also predicts the chosen algorithm at
  // chunkBytes / 2, / 4, ... down to this, and keeps the fastest if it beats chunkBytes by
  // chunkGain: more messages pipeline a step through a chain of ranks sooner, at a per-message
  // cost.
  size_t minChunkBytes = 0;
  double chunkGain = 0.05;
  int windowChunks = 8;            // messages in flight per channel (the shm slots per pair)
  uint64_t pieceBudget = 1 << 20;  // pieces walked at most, all ranks together
  int maxPiecesPerStep = 64;
  // The selector walks candidates in increasing order of lowerBoundTime and skips one whose
  // bound already exceeds the best prediction (it could not have been picked); false walks all.
  bool skipLosers = true;
  // The walk's cost grows with the steps of all ranks together (two_shot and ring at 1024 ranks,
  // 6M steps, take about 7 s here); past this many, the selector does not walk a candidate that
  // its bound could not skip, and calls it unavailable, so that a job's first call of a size
  // does not stall on its prediction.
  uint64_t walkBudget = uint64_t(1) << 21;
};

// Predicted microseconds from every rank starting together to the last one finishing;
// +infinity when the schedules cannot finish (a receive nobody sends).
double predictTime(const OpDesc& d, const std::vector<Schedule>& perRank,
                   const topo::Topology& topo, const CostParams& p);

// A lower bound of predictTime over all `size` ranks' schedules, from the schedules of a few of
// them (schedules[i] is rank ranks[i]'s): any rank's own work bounds the whole, so a sample of
// ranks gives a true, if looser, bound. No event walk: linear in the sampled steps, so the
// selector can bound an algorithm without building every rank's schedule.
double lowerBoundTime(const OpDesc& d, int size, const std::vector<int>& ranks,
                      const std::vector<Schedule>& schedules, const topo::Topology& topo,
                      const CostParams& p);

}  // namespace chorus
