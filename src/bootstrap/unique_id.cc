// UniqueId encoding, and createUniqueId: pick this host's address, draw a secret, start a root.
#include <errno.h>
#include <sys/random.h>

#include <cstring>

#include "bootstrap/bootstrap.h"
#include "bootstrap/unique_id_codec.h"
#include "bootstrap/wire.h"
#include "common/env.h"
#include "common/log.h"

namespace chorus {
namespace boot {

namespace {
constexpr uint32_t kIdMagic = 0x44494843;  // "CHID"
constexpr uint16_t kIdVersion = 1;
constexpr size_t kAddrOffset = 8;
constexpr size_t kSecretOffset = 32;
constexpr uint16_t kFlagWeakSecret = 1;
}  // namespace

void encodeUniqueId(const SockAddr& addr, const uint8_t* secret, bool weakSecret, UniqueId* out) {
  Writer w;
  w.u32(kIdMagic);
  w.u16(kIdVersion);
  w.u16(weakSecret ? kFlagWeakSecret : 0);
  w.addr(addr);  // 24 bytes: family, port, scope, address
  w.bytes(secret, kSecretBytes);
  memset(out->bytes, 0, sizeof out->bytes);
  memcpy(out->bytes, w.buffer().data(), w.buffer().size());
}

Status decodeUniqueId(const UniqueId& id, RootInfo* out) {
  Reader r(id.bytes, sizeof id.bytes);
  uint32_t magic = 0;
  uint16_t version = 0, flags = 0;
  r.u32(&magic);
  r.u16(&version);
  r.u16(&flags);
  if (magic != kIdMagic)
    return Status::InvalidArgument(
        "not a Chorus unique id (bad magic): pass the id from createUniqueId to every rank "
        "unchanged");
  if (version != kIdVersion)
    return Status::InvalidArgument("unique id version " + std::to_string(version) +
                                   ", this Chorus understands " + std::to_string(kIdVersion) +
                                   " (ranks from different Chorus builds?)");
  if ((flags & ~kFlagWeakSecret) != 0)
    return Status::InvalidArgument("unique id flags " + std::to_string(flags) +
                                   " are unknown to this Chorus (ranks from different builds?)");
  out->weakSecret = (flags & kFlagWeakSecret) != 0;
  Reader a(id.bytes + kAddrOffset, kSecretOffset - kAddrOffset);
  if (!a.addr(&out->addr) || !out->addr.valid())
    return Status::InvalidArgument("unique id holds no valid root address");
  memcpy(out->secret, id.bytes + kSecretOffset, kSecretBytes);
  return Status::Ok();
}

Status randomSecret(uint8_t* out) {
  size_t got = 0;
  while (got < kSecretBytes) {
    ssize_t n = getrandom(out + got, kSecretBytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "getrandom for the job secret");
    got += size_t(n);
  }
  return Status::Ok();
}

}  // namespace boot

Status makeUniqueId(const std::string& host, int port, const uint8_t* secret, bool weakSecret,
                    UniqueId* out) {
  if (!secret || !out) return Status::InvalidArgument("makeUniqueId: null argument");
  SockAddr addr;
  CHORUS_RETURN_IF_ERROR(resolveHost(host, port, &addr).withContext("bootstrap root address"));
  boot::encodeUniqueId(addr, secret, weakSecret, out);
  return Status::Ok();
}

std::string uniqueIdAddress(const UniqueId& id) {
  boot::RootInfo info;
  if (!boot::decodeUniqueId(id, &info).ok()) return "<invalid unique id>";
  return info.addr.toString();
}

Status createUniqueId(UniqueId* out, double timeoutSec) {
  if (!out) return Status::InvalidArgument("createUniqueId: null output");
  std::string spec = envString("CHORUS_SOCKET_IFNAME").value_or("");
  std::vector<NetInterface> ifs;
  CHORUS_RETURN_IF_ERROR(findInterfaces(spec, 1, &ifs).withContext("createUniqueId"));
  uint8_t secret[kSecretBytes];
  CHORUS_RETURN_IF_ERROR(boot::randomSecret(secret));
  boot::encodeUniqueId(ifs[0].addr, secret, /*weakSecret=*/false, out);
  CHORUS_RETURN_IF_ERROR(startRoot(out, timeoutSec));
  LOG_INFO(kLogBoot, "bootstrap root on interface %s at %s%s", ifs[0].name.c_str(),
           uniqueIdAddress(*out).c_str(),
           spec.empty() ? " (set CHORUS_SOCKET_IFNAME to choose another)" : "");
  return Status::Ok();
}

}  // namespace chorus
