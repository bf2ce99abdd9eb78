#pragma once
// Token data in llm.c's format: a header of 256 little-endian int32 (magic 20240520,
// version 1, token count), then the tokens as uint16. The loader cuts batches of B
// rows of T tokens with the targets shifted by one, read sequentially from the start
// and wrapping to the start when the next batch would run past the end (or, when
// asked, in a shuffled order of batches per pass).
#include <cstdint>
#include <string>
#include <vector>

#include "workbench/runtime/rng.h"

namespace wb::trainer {

struct TokenFile {
  std::string path;
  std::vector<int32_t> tokens;
};

// llm.c token files through the tokenizer library (tokenizer/token_file.h);
// throws UsageError on a missing, truncated or foreign file.
TokenFile read_tokens(const std::string& path);
void write_tokens(const std::string& path, const std::vector<int32_t>& tokens);

class DataLoader {
 public:
  // Throws UsageError when the file holds less than one batch (B*T + 1 tokens) or a
  // token outside [0, V).
  DataLoader(const TokenFile& file, int B, int T, int V, bool shuffle, uint64_t seed);

  // The next batch: B*T inputs and the B*T targets that follow them.
  void next(int32_t* inputs, int32_t* targets);
  void reset();
  int64_t batches_per_pass() const { return batches_; }

  // Where the loader stands: this pass's order of batches, the next one in it, and the
  // shuffle generator (which draws the order of the next pass). Restoring it continues
  // exactly where position() was taken; restore throws UsageError when the position
  // cannot be this file's (another count of batches, an order that is not a
  // permutation of them, next past the end).
  struct Position {
    std::vector<int64_t> order;
    int64_t next = 0;
    Rng::State rng{};
  };
  Position position() const { return {order_, next_, rng_.state()}; }
  void restore(const Position& p);

 private:
  void start_pass();
  const TokenFile& file_;
  int64_t span_;     // B*T
  int64_t batches_;  // whole batches that fit: (count - 1) / span
  bool shuffle_;
  Rng rng_;
  std::vector<int64_t> order_;
  int64_t next_ = 0;
};

}  // namespace wb::trainer
