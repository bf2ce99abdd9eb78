#pragma once
// GPT-2's configuration and parameters in llm.c's layout: 16 tensors in a fixed order,
// one flat buffer, the vocabulary padded from V to Vp rows of wte. Checkpoints are
// llm.c model files: a header of 256 int32 (magic 20240326, version 3 = fp32 or 5 =
// bf16, both with padded vocabulary, maxT, V, L, NH, C, Vp), then the tensors as
// float32 (version 3) or bf16 (version 5).
#include <array>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "base/bf16.h"

namespace wb::trainer {

struct Config {
  int maxT = 0;  // positions of wpe
  int V = 0;     // vocabulary
  int Vp = 0;    // padded vocabulary (rows of wte)
  int L = 0;     // layers
  int NH = 0;    // heads
  int C = 0;     // channels

  // Throws UsageError when the numbers cannot describe a GPT-2.
  void validate() const;
  std::string describe() const;  // "L=12 C=768 NH=12 V=50257 Vp=50304 maxT=1024"
};

// "d12" (GPT-2 124M), "d24", "d36", "d48", or "L,C,NH" (V=50257 padded to 50304,
// maxT=1024); throws UsageError.
Config config_from_init(const std::string& spec);

constexpr int kNumParamTensors = 16;
const std::array<const char*, kNumParamTensors>& param_names();  // wte, wpe, ln1w, ...
std::array<int64_t, kNumParamTensors> param_sizes(const Config& c);
int64_t num_params(const Config& c);

// Offsets of the tensors in the flat buffer.
struct ParamLayout {
  explicit ParamLayout(const Config& c);
  std::array<int64_t, kNumParamTensors> offset;
  std::array<int64_t, kNumParamTensors> size;
  int64_t total = 0;
};

// GPT-2's initialisation: weights N(0, 0.02), the two residual projections of every
// block N(0, 0.02/sqrt(2L)), biases 0, layernorm weights 1; the padded rows of wte 0.
std::vector<float> init_params(const Config& c, uint64_t seed);

struct Checkpoint {
  Config config;
  std::vector<float> params;  // widened from bf16 (exactly) when the file holds bf16
  bool bf16 = false;          // version 5
};
// Either version; throws UsageError on a missing, truncated or foreign file.
Checkpoint read_checkpoint(const std::string& path);
// The same from a seekable binary stream (its size is checked against the header before
// the parameters are read); `origin` names it in the message of the error.
Checkpoint read_checkpoint(std::istream& in, const std::string& origin);
void write_checkpoint(const std::string& path, const Config& c, const float* params);  // version 3
void write_checkpoint(const std::string& path, const Config& c, const bf16* params);   // version 5

}  // namespace wb::trainer
