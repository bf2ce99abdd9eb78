#pragma once
// The problem size of an op, in GPT-2's names. Every op uses a subset of the dims
// (OpSpec::dims); the others are carried along unused.
//
//   B  batch size              V   vocabulary size (50257 for GPT-2)
//   T  sequence length         Vp  vocabulary padded for alignment (50304)
//   C  channels                OC  output channels of a matmul (default 4*C)
//   NH attention heads         L   layers (only used to derive N)
//   N  number of parameters (AdamW, global norm); default: GPT-2's count at V, C, L, T
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

struct Shape {
  int64_t B = 0, T = 0, C = 0, NH = 0, V = 0, Vp = 0, OC = 0, L = 0, N = 0;

  int64_t get(std::string_view dim) const;  // throws UsageError on an unknown dim
  void set(std::string_view dim, int64_t value);
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }

  static const std::vector<std::string>& dim_names();
};

// "gpt2-124m" (B=4, T=1024, C=768, NH=12, V=50257) and "llmc-dev" (B=8, same otherwise).
const std::vector<std::string>& preset_names();
Shape preset_shape(std::string_view name);

// A preset name, "K=V,K=V,..." on top of gpt2-124m, or a preset followed by
// overrides ("llmc-dev,T=256"). Dims not given are derived: Vp = V rounded up to a
// multiple of 128, OC = 4*C, N = gpt2_parameter_count(...). Throws UsageError.
Shape parse_shape(std::string_view text);

// Whether two shapes agree on the dims named (the dims an op uses).
bool same_dims(const Shape& a, const Shape& b, const std::vector<std::string>& dims);

// "B=4 T=1024 C=768" for the dims named.
std::string describe(const Shape& s, const std::vector<std::string>& dims);

// Number of parameters of a GPT-2 with a padded vocabulary Vp, width C, L layers and
// maxT positions (llm.c's layout): 124,475,904 for Vp=50304, C=768, L=12, maxT=1024.
int64_t gpt2_parameter_count(int64_t Vp, int64_t C, int64_t L, int64_t maxT);

int64_t round_up(int64_t x, int64_t multiple);

// The shapes `wb check` runs every variant on: tiny, not powers of two, GPT-2 width,
// and the full 50257-token vocabulary padded to 50304.
std::vector<Shape> check_shapes();
// The shapes `wb check --backend emu` runs: small enough for the emulator (every
// thread is a fiber), yet with tails, several blocks, wide rows, long sequences and the
// full vocabulary.
std::vector<Shape> emu_check_shapes();

// The same, named (tiny, odd, wide, long, vocab; gpt2 instead of wide on a device), for
// `wb check --shapes`.
struct CheckShape {
  std::string name;
  Shape shape;
};
std::vector<CheckShape> named_check_shapes(bool emulated);

}  // namespace wb
