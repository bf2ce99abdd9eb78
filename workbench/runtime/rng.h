#pragma once
// A small seeded generator (splitmix64 to seed, xoshiro256** to draw) so that the
// same seed gives the same inputs on every machine and compiler.
#include <array>
#include <cstdint>
#include <string_view>

namespace wb {

class Rng {
 public:
  explicit Rng(uint64_t seed);
  // A generator for one named stream of a seed: adding a tensor to an op does not
  // change the values of the others.
  Rng(uint64_t seed, std::string_view stream);

  uint64_t next();
  double uniform(double lo, double hi);  // [lo, hi)
  int64_t below(int64_t n);              // [0, n)

  // The generator's whole state, so that a saved run can continue its draws exactly
  // (the trainer's --state files). An all-zero state is not one xoshiro can reach.
  using State = std::array<uint64_t, 4>;
  State state() const { return {s_[0], s_[1], s_[2], s_[3]}; }
  void restore(const State& s) {
    for (int i = 0; i < 4; ++i) s_[i] = s[i];
  }

 private:
  uint64_t s_[4];
};

// A fresh seed from the system's entropy source.
uint64_t fresh_seed();

}  // namespace wb
