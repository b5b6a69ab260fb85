// Where the cost model puts each rank: its engine's rates, and the ports its bytes cross. A
// port is a full-duplex resource that every transfer through it shares, one direction each way:
// a NIC (the ranks nearest it share it), or a GPU's NVLink links taken together (through an
// NVSwitch any peer gets all of them, so every channel of the GPU shares them). Transfers on
// different ports run in parallel; transfers on one port take turns at its rate.
#pragma once

#include <vector>

#include "topo/topology.h"

namespace chorus {

struct Place {
  double stretch = 1;    // more ranks than cores on its host
  double copyGBs = 1;    // a local copy
  double reduceGBs = 1;  // a receive-reduce
  int nic = -1;          // its NIC port, for network transfers
  int nvlink = -1;       // its GPU's NVLink port; -1 when the GPU's links are not known
  // Sends over the network cost its engine nothing but the message overhead: a GPU rank whose
  // NIC does RDMA (GPUDirect: the NIC reads device memory itself).
  bool nicReadsMemory = false;
  int host = -1;  // its host, for the memory model; -1 when not modelled (GPU, unplaced)
};

struct Placement {
  std::vector<Place> ranks;
  std::vector<double> portGBs;  // per port, GB/s each way
};

// Every one of n ranks placed on `topo` (ranks past those it places: host-memory ranks on
// nothing in particular, each with a network port of the network estimate).
Placement placeRanks(const topo::Topology& topo, int n);

// Whether a transfer from a to b over a path of class pc crosses ports (their NICs, or both
// GPUs' NVLink ports), and which: out on `from`, in on `to`.
bool portsOf(const Place& a, const Place& b, topo::PathClass pc, int* from, int* to);

}  // namespace chorus

namespace chorus {

// The bytes per message a simulation assumes when no transports say (chorus-sim): the device
// transports' (Topology::deviceMessageBytes) when the topology states it and each of the n
// ranks is a GPU rank, else `hostBytes` (the host transports' slot).
size_t assumedMessageBytes(const topo::Topology& topo, int n, size_t hostBytes);

}  // namespace chorus
