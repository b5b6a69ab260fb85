#include "bootstrap/auth.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <vector>

namespace chorus::auth {

Status randomBytes(void* out, size_t n) {
  auto* p = static_cast<uint8_t*>(out);
  size_t got = 0;
  while (got < n) {
    ssize_t k = getrandom(p + got, n - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return Status::FromErrno(errno, "getrandom");
    got += size_t(k);
  }
  return Status::Ok();
}

Status randomNonce(Nonce* out) {
  return randomBytes(out->data(), out->size());
}

Mac computeMac(const uint8_t* secret, std::string_view label, std::initializer_list<Bytes> parts) {
  // Each part is preceded by its length, so two different splits of the same bytes differ.
  std::vector<uint8_t> msg(label.begin(), label.end());
  for (const Bytes& b : parts) {
    uint64_t n = b.size;
    for (int i = 0; i < 8; ++i) msg.push_back(uint8_t(n >> (8 * i)));
    const auto* p = static_cast<const uint8_t*>(b.data);
    msg.insert(msg.end(), p, p + b.size);
  }
  Mac mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret, int(kSecretBytes), msg.data(), msg.size(), mac.data(), &len);
  return mac;
}

bool macEquals(const uint8_t* a, const uint8_t* b) {
  return CRYPTO_memcmp(a, b, kMacBytes) == 0;
}

}  // namespace chorus::auth
