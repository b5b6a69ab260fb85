// RoCE GID choice. An Ethernet port's GID table holds one entry per (address, RoCE version):
// typically index 0/1 the link-local fe80:: address as RoCE v1/v2, then each IP address of the
// interface again as v1 and v2. RoCE v2 is routable (UDP/IP) and IPv4 is what RoCE fabrics are
// configured for, so with no CHORUS_IB_GID_INDEX the verbs provider takes a RoCE v2 entry with
// an IPv4-mapped address, as NCCL does. The version of an entry is only told by sysfs
// (/sys/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<index>); libibverbs' own query
// for it is private. Nothing here needs the verbs headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chorus {

struct RoceGid {
  int index = 0;
  uint8_t gid[16] = {};
  std::string type;  // as sysfs says: "RoCE v2", "IB/RoCE v1"; empty when it could not be read
};

// <ibdevPath>/ports/<port>, where ibdevPath is ibv_device::ibdev_path
// ("/sys/class/infiniband/mlx5_0").
std::string gidPortDir(const std::string& ibdevPath, int port);
// The type of GID `index` from <portDir>/gid_attrs/types/<index>, trimmed; empty when the
// file is missing or unreadable (the kernel fails the read for unused entries).
std::string readGidType(const std::string& portDir, int index);

// The best entry of `table` (its index into the table's vector is not assumed; the entry's
// own `index` is returned), or -1 when every entry is empty. Preference: RoCE v2 over v1 and
// unknown, then IPv4-mapped over global IPv6 over link-local, then the lowest index.
int chooseRoceGid(const std::vector<RoceGid>& table);

bool gidIsZero(const uint8_t gid[16]);
bool gidIsIpv4Mapped(const uint8_t gid[16]);
// "::ffff:10.0.0.1", "fe80::1": for logs and errors.
std::string gidText(const uint8_t gid[16]);

}  // namespace chorus
