// A small, fully specified generator (splitmix64), so that initialisation and shuffling are
// the same on every rank, build and standard library.
#pragma once

#include <cstdint>
#include <vector>

namespace train {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 40) * 0x1p-24f; }
  // Uniform in [0, n) (n small enough that the modulo bias is negligible for shuffling).
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t s_;
};

// The order in which epoch `epoch` visits n items: depends only on (seed, epoch).
inline std::vector<uint32_t> epochOrder(uint64_t seed, int epoch, int64_t n) {
  std::vector<uint32_t> p(static_cast<size_t>(n));
  for (size_t i = 0; i < p.size(); ++i) p[i] = uint32_t(i);
  Rng rng(seed * 0x100000001b3ull + uint64_t(epoch) + 1);
  for (size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
  return p;
}

}  // namespace train
