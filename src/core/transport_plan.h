// Transport selection: which peers a rank reaches over shared memory and which over TCP, and
// the one chunk size every rank must use (the executor cuts messages by it on every link).
#pragma once

#include <cstddef>
#include <vector>

#include "chorus/status.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

struct TransportPlan {
  std::vector<int> shmHostOf;  // host grouping handed to shm (every rank alone when forced)
  std::vector<bool> tcpPeer;   // this rank talks to q over TCP
  bool tcpUsed = false;        // some pair in the job uses TCP (so every rank joins its set-up)
  bool shmActive = false;      // this rank has at least one shm peer
  bool oneHost = false;        // every rank on one host: loopback is a fine TCP interface
  size_t payload = 0;          // job-wide chunk size
};

// Same-host peers use shm, others TCP; `forceTcp` (CHORUS_TRANSPORT=tcp) puts every pair on
// TCP. Every rank computes the same job-wide fields from the same hostOf.
TransportPlan planTransports(const std::vector<int>& hostOf, int rank, bool forceTcp,
                             size_t shmSlotBytes, const TcpOptions& tcp);

// CHORUS_TRANSPORT: "auto" (default) or "tcp".
Status transportMode(bool* forceTcp);

}  // namespace chorus
