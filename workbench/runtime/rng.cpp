#include "workbench/runtime/rng.h"

#include <random>

namespace wb {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

Rng::Rng(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

Rng::Rng(uint64_t seed, std::string_view stream) : Rng(seed ^ fnv1a(stream)) {}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform(double lo, double hi) {
  const double unit = double(next() >> 11) * 0x1.0p-53;  // [0, 1) with 53 random bits
  return lo + (hi - lo) * unit;
}

int64_t Rng::below(int64_t n) { return n <= 1 ? 0 : int64_t(next() % uint64_t(n)); }

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

}  // namespace wb
