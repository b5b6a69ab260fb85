// Feeds: the 128 bytes of a UniqueId (bootstrap/unique_id_codec.h), as a user might pass any
// bytes to ncclCommInitRank or Bootstrap::init; shorter inputs are zero-padded.
// Checks: no crash, UB or leak; an id that decodes names a valid root address; re-encoding
// what was decoded gives an id that decodes to the same address and secret and re-encodes to
// itself; uniqueIdAddress() says something for every id.
#include <cstring>

#include "bootstrap/unique_id_codec.h"
#include "fuzz_check.h"

using namespace chorus;
using namespace chorus::boot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  UniqueId id;
  memset(id.bytes, 0, sizeof id.bytes);
  memcpy(id.bytes, data, std::min(size, sizeof id.bytes));
  FUZZ_CHECK(!uniqueIdAddress(id).empty());
  RootInfo info;
  if (!decodeUniqueId(id, &info).ok()) return 0;
  FUZZ_CHECK(info.addr.valid());
  FUZZ_CHECK(memcmp(info.secret, id.bytes + 32, kSecretBytes) == 0);
  UniqueId once;
  encodeUniqueId(info.addr, info.secret, info.weakSecret, &once);
  RootInfo again;
  FUZZ_CHECK(decodeUniqueId(once, &again).ok());
  FUZZ_CHECK(again.addr.len == info.addr.len &&
             memcmp(&again.addr.storage, &info.addr.storage, sizeof info.addr.storage) == 0 &&
             memcmp(again.secret, info.secret, kSecretBytes) == 0 &&
             again.weakSecret == info.weakSecret);
  UniqueId twice;
  encodeUniqueId(again.addr, again.secret, again.weakSecret, &twice);
  FUZZ_CHECK(memcmp(once.bytes, twice.bytes, sizeof once.bytes) == 0);
  FUZZ_CHECK(uniqueIdAddress(once) == info.addr.toString());
  return 0;
}
