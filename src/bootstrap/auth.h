// Proving knowledge of the job secret without sending it: every handshake (bootstrap root,
// rank 0's star, TCP streams) is a challenge and response over fresh nonces, answered with
// HMAC-SHA256 keyed by the secret (OpenSSL's libcrypto). Someone who watches a handshake
// learns nothing that lets them answer the next one, and a reply cannot be replayed, because
// each side's proof covers the other side's nonce.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "bootstrap/bootstrap.h"
#include "chorus/status.h"

namespace chorus::auth {

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;
using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

// A byte range to authenticate.
struct Bytes {
  const void* data;
  size_t size;
};

// `n` bytes from the kernel's CSPRNG.
Status randomBytes(void* out, size_t n);
Status randomNonce(Nonce* out);

// HMAC-SHA256 keyed by the job secret (kSecretBytes) over a label that says which proof this
// is (so a proof for one purpose never passes for another) followed by the parts.
Mac computeMac(const uint8_t* secret, std::string_view label, std::initializer_list<Bytes> parts);

// Constant time, so a stranger learns nothing from how fast it is turned away.
bool macEquals(const uint8_t* a, const uint8_t* b);

}  // namespace chorus::auth
