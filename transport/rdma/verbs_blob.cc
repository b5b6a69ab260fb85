#include "transport/rdma/verbs_blob.h"

#include <cstring>
#include <string>

namespace chorus {

namespace {

constexpr uint8_t kMagic[4] = {'C', 'H', 'V', 'B'};

// Writes `bytes` bytes of `v`, little-endian, at `p`; returns the byte after them.
uint8_t* put(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
  return p;
}

uint64_t get(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

Status malformed(const std::string& why) {
  return Status::InvalidArgument("verbs set-up description is malformed: " + why +
                                 " (a rank running another Chorus version, or a bug)");
}

}  // namespace

std::vector<uint8_t> encodeVerbsInfo(const VerbsEndpointInfo& info) {
  // Sized first and filled in place (GCC 12's -O3 also mistakes growing inserts for overflows).
  std::vector<uint8_t> out(kVerbsBlobHeaderBytes + info.qpns.size() * (4 + 4 * size_t(info.lanes)));
  uint8_t* p = out.data();
  std::memcpy(p, kMagic, 4);
  p = put(p + 4, kVerbsBlobVersion, 2);
  p = put(p, info.linkLayer, 1);
  p = put(p, info.mtu, 1);
  p = put(p, info.lid, 2);
  p = put(p, uint16_t(info.lanes), 2);
  p = put(p, uint32_t(info.rank), 4);
  p = put(p, uint32_t(info.size), 4);
  p = put(p, uint32_t(info.qpns.size()), 4);
  std::memcpy(p, info.gid, 16);
  p += 16;
  for (const auto& [peer, qpns] : info.qpns) {
    p = put(p, uint32_t(peer), 4);
    for (int lane = 0; lane < info.lanes; ++lane)
      p = put(p, lane < int(qpns.size()) ? qpns[lane] : 0, 4);
  }
  return out;
}

Status decodeVerbsInfo(const uint8_t* data, size_t bytes, VerbsEndpointInfo* out) {
  *out = VerbsEndpointInfo{};
  if (bytes < kVerbsBlobHeaderBytes)
    return malformed(std::to_string(bytes) + " bytes, shorter than its " +
                     std::to_string(kVerbsBlobHeaderBytes) + "-byte header");
  if (std::memcmp(data, kMagic, 4) != 0) return malformed("it does not start with 'CHVB'");
  uint16_t version = get(data + 4, 2);
  if (version != kVerbsBlobVersion)
    return malformed("version " + std::to_string(version) + ", this rank reads version " +
                     std::to_string(kVerbsBlobVersion));
  out->linkLayer = data[6];
  out->mtu = data[7];
  out->lid = get(data + 8, 2);
  out->lanes = int(get(data + 10, 2));
  out->rank = int(get(data + 12, 4));
  out->size = int(get(data + 16, 4));
  uint64_t entries = get(data + 20, 4);
  std::memcpy(out->gid, data + 24, 16);
  if (out->linkLayer != VerbsEndpointInfo::kInfiniBand &&
      out->linkLayer != VerbsEndpointInfo::kEthernet)
    return malformed("link layer " + std::to_string(out->linkLayer));
  if (out->mtu < 1 || out->mtu > 5) return malformed("MTU code " + std::to_string(out->mtu));
  if (out->lanes < 1 || out->lanes > kVerbsMaxLanes)
    return malformed(std::to_string(out->lanes) + " lanes");
  // Sizes come from the job's bootstrap, which keeps them far below 2^31.
  if (out->size < 1 || out->rank >= out->size || out->size > (1 << 30))
    return malformed("rank " + std::to_string(out->rank) + " of " + std::to_string(out->size));
  if (entries > uint64_t(out->size)) return malformed(std::to_string(entries) + " peer entries");
  size_t entryBytes = 4 + 4 * size_t(out->lanes);
  size_t want = kVerbsBlobHeaderBytes + entries * entryBytes;
  if (bytes != want)
    return malformed(std::to_string(bytes) + " bytes where " + std::to_string(entries) +
                     " peer entries of " + std::to_string(out->lanes) + " lanes make " +
                     std::to_string(want));
  const uint8_t* p = data + kVerbsBlobHeaderBytes;
  for (uint64_t i = 0; i < entries; ++i, p += entryBytes) {
    uint64_t peer = get(p, 4);
    if (peer >= uint64_t(out->size))
      return malformed("an entry for rank " + std::to_string(peer) + " of a job of " +
                       std::to_string(out->size));
    std::vector<uint32_t>& qpns = out->qpns[int(peer)];
    if (!qpns.empty()) return malformed("two entries for rank " + std::to_string(peer));
    for (int lane = 0; lane < out->lanes; ++lane) {
      uint32_t qpn = uint32_t(get(p + 4 + 4 * lane, 4));
      // QP numbers are 24 bits; 0 and 1 are the special QPs, never an RC queue pair.
      if (qpn < 2 || qpn >= (1u << 24))
        return malformed("QP number " + std::to_string(qpn) + " for rank " + std::to_string(peer) +
                         " lane " + std::to_string(lane));
      qpns.push_back(qpn);
    }
  }
  return Status::Ok();
}

Status findQpnsFor(const VerbsEndpointInfo& peerInfo, int myRank, std::vector<uint32_t>* qpns) {
  auto it = peerInfo.qpns.find(myRank);
  if (it == peerInfo.qpns.end())
    return Status::InvalidUsage("verbs set-up: rank " + std::to_string(peerInfo.rank) +
                                " made no queue pairs for rank " + std::to_string(myRank) +
                                ", which takes it for a peer (the ranks' peer lists disagree)");
  *qpns = it->second;
  return Status::Ok();
}

}  // namespace chorus
