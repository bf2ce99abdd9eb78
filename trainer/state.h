#pragma once
// The resumable training state (--state, --resume): everything a later step depends
// on, so that a run killed and resumed continues exactly where its last state left it.
// A model file (--save) holds the parameters only; AdamW's moments, the step (AdamW's
// bias correction and the learning-rate schedule), the data loader's order and
// position, its shuffle generator and the sampler's generator live here too.
//
// File layout, little-endian (the machine's order: the trainer writes and reads it on
// the same kind of host):
//   header: 128 uint64 slots (1024 bytes)
//     0 magic 20261122, 1 version 1, 2 checksum of every byte after slot 2
//     3..8  maxT, V, Vp, L, NH, C          9, 10  B, T
//     11 steps completed                   12 --steps of the run that wrote it
//     13 parameter count N                 14 batches per pass of the training file
//     15 the next batch of the pass        16, 17 training tokens: count, hash
//     18..21 the data loader's generator   22..25 the sampler's generator
//     26..31 --lr, --weight-decay, --grad-clip, --beta1, --beta2, --eps (float32 bits)
//     32 --warmup  33 --schedule (0 const, 1 cosine)  34 --final-lr-frac (float32 bits)
//     35 --seed  36 --shuffle  37 hash of the kernel plan (op, shape, variant, launch)
//     38 the parameters' storage: 0 fp32, 1 bf16 (--precision bf16)
//     39 --rounding: 0 stochastic, 1 nearest (a reserved slot until then: older
//        states read as stochastic, which they were)
//     40..127 zero
//   payload: the pass's batch order (int64 x batches), then the parameters (in bf16:
//   the fp32 master weights), AdamW's m and v (float32 x N each, in llm.c's parameter
//   order); in bf16 then the bf16 parameters (uint16 x N), which after an update are
//   the master weights rounded stochastically (unless --rounding nearest), not to
//   nearest: a resume needs them to continue bitwise. The stochastic rounding's seed is a function of --seed and the
//   step, so that the state needs no generator for it.
// The header is checked against the file's size before anything is allocated; a
// trailing byte, a checksum that does not match or a non-zero reserved slot is an
// error.
#include <cstdint>
#include <string>
#include <vector>

#include "trainer/data.h"
#include "trainer/model.h"
#include "trainer/options.h"
#include "workbench/runtime/rng.h"

namespace wb::trainer {

// The options a resume must repeat: they shape every later step.
struct StateSettings {
  int B = 0, T = 0, steps = 0;
  float lr = 0;
  AdamwConstants adamw;
  int warmup = 0;
  std::string schedule;  // const | cosine
  float final_lr_frac = 0;
  uint64_t seed = 0;
  bool shuffle = false;
  bool nearest_rounding = false;  // bf16: --rounding nearest
};

struct TrainState {
  Config config;
  StateSettings settings;
  int64_t step = 0;  // steps completed; a resume runs step + 1 next
  uint64_t train_tokens = 0, train_hash = 0;
  uint64_t plan_hash = 0;
  DataLoader::Position data;
  Rng::State sampler{};
  std::vector<float> params, m, v;  // params: the master weights in bf16
  std::vector<bf16> bf16_params;    // bf16 runs only; empty: an fp32 state
};

// A 64-bit hash of bytes (not cryptographic): the checksum, the training tokens' and
// the kernel plan's fingerprints.
class Hasher {
 public:
  void add(const void* data, std::size_t bytes);
  void add(const std::string& text) { add(text.data(), text.size()); }
  uint64_t value() const;

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
  std::size_t length_ = 0;
};

uint64_t hash_tokens(const std::vector<int32_t>& tokens);

// Written through AtomicFile: a kill mid-write leaves the previous state. Throws
// FileError when it cannot write.
void write_state(const std::string& path, const TrainState& s);
// Throws UsageError on a missing, truncated, foreign or corrupt file, naming it.
TrainState read_state(const std::string& path);

}  // namespace wb::trainer
