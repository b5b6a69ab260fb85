// What one rank's verbs provider tells the others at set-up (RdmaNic::prepare/connect): its
// port's address (LID for InfiniBand, GID for RoCE), its port MTU, and, for every peer it
// made queue pairs for, their numbers. Ranks it made none for are left out, so the blob grows
// with the peers a rank talks to, not with the job.
//
// Layout, little-endian, version 1:
//   0  magic "CHVB"        4  u16 version       6  u8 link layer     7  u8 MTU (ibv_mtu)
//   8  u16 LID            10  u16 lanes        12  u32 rank         16  u32 job size
//  20  u32 peer entries   24  u8[16] GID
//  40  per entry: u32 rank, then `lanes` x u32 QP number
// Nothing here needs the verbs headers, so it is tested on machines without them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "chorus/status.h"

namespace chorus {

struct VerbsEndpointInfo {
  // The values of enum ibv_link_layer.
  static constexpr uint8_t kInfiniBand = 1;
  static constexpr uint8_t kEthernet = 2;

  uint8_t linkLayer = kInfiniBand;
  uint8_t mtu = 0;  // enum ibv_mtu: 1 = 256 bytes .. 5 = 4096
  uint16_t lid = 0;
  uint8_t gid[16] = {};
  int rank = 0;
  int size = 0;
  int lanes = 0;
  std::map<int, std::vector<uint32_t>> qpns;  // peer rank -> one QP number per lane
};

constexpr uint16_t kVerbsBlobVersion = 1;
constexpr size_t kVerbsBlobHeaderBytes = 40;
constexpr int kVerbsMaxLanes = 64;

std::vector<uint8_t> encodeVerbsInfo(const VerbsEndpointInfo& info);
// InvalidArgument saying what is wrong when `bytes` is not a well-formed version-1 blob.
Status decodeVerbsInfo(const uint8_t* data, size_t bytes, VerbsEndpointInfo* out);
// The QP numbers `peerInfo`'s rank made for `myRank`; InvalidUsage when it made none (the
// two ranks disagree about being peers).
Status findQpnsFor(const VerbsEndpointInfo& peerInfo, int myRank, std::vector<uint32_t>* qpns);

}  // namespace chorus
