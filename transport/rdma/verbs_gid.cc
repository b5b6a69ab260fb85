#include "transport/rdma/verbs_gid.h"

#include <arpa/inet.h>
#include <strings.h>

#include <fstream>

namespace chorus {

namespace {

bool isLinkLocal(const uint8_t gid[16]) {
  return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80;
}

// Lower is better; see chooseRoceGid.
int rank(const RoceGid& g) {
  int version = strcasecmp(g.type.c_str(), "RoCE v2") == 0      ? 0
                : strcasecmp(g.type.c_str(), "IB/RoCE v1") == 0 ? 1
                                                                : 2;
  int address = gidIsIpv4Mapped(g.gid) ? 0 : isLinkLocal(g.gid) ? 2 : 1;
  return version * 3 + address;
}

}  // namespace

std::string gidPortDir(const std::string& ibdevPath, int port) {
  return ibdevPath + "/ports/" + std::to_string(port);
}

std::string readGidType(const std::string& portDir, int index) {
  std::ifstream in(portDir + "/gid_attrs/types/" + std::to_string(index));
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  size_t e = line.find_last_not_of(" \t\r\n");
  return e == std::string::npos ? "" : line.substr(0, e + 1);
}

int chooseRoceGid(const std::vector<RoceGid>& table) {
  const RoceGid* best = nullptr;
  for (const RoceGid& g : table) {
    if (gidIsZero(g.gid)) continue;
    if (!best || rank(g) < rank(*best) || (rank(g) == rank(*best) && g.index < best->index))
      best = &g;
  }
  return best ? best->index : -1;
}

bool gidIsZero(const uint8_t gid[16]) {
  for (int i = 0; i < 16; ++i)
    if (gid[i]) return false;
  return true;
}

bool gidIsIpv4Mapped(const uint8_t gid[16]) {
  for (int i = 0; i < 10; ++i)
    if (gid[i]) return false;
  return gid[10] == 0xff && gid[11] == 0xff;
}

std::string gidText(const uint8_t gid[16]) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid, text, sizeof text);  // cannot fail: the family and size are right
  return text;
}

}  // namespace chorus
