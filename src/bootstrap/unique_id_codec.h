// The layout of a UniqueId's 128 bytes (little-endian):
//   0 magic "CHID" (u32)    4 version (u16)    6 flags (u16; bit 0: weak secret)
//   8 family: 4 or 6 (u16) 10 port (u16)      12 IPv6 scope id (u32)
//  16 address (16 bytes; IPv4 uses the first 4)
//  32 job secret (32 bytes)                    64..127 zero
#pragma once

#include <cstdint>

#include "bootstrap/bootstrap.h"
#include "common/socket.h"

namespace chorus::boot {

struct RootInfo {
  SockAddr addr;
  uint8_t secret[kSecretBytes] = {};
  bool weakSecret = false;  // see makeUniqueId
};

void encodeUniqueId(const SockAddr& addr, const uint8_t* secret, bool weakSecret, UniqueId* out);
// Rejects ids that are not ours (bad magic: passed garbled or not at all), of another version or
// with flags this build does not know.
Status decodeUniqueId(const UniqueId& id, RootInfo* out);
// kSecretBytes from the kernel's CSPRNG.
Status randomSecret(uint8_t* out);

}  // namespace chorus::boot
