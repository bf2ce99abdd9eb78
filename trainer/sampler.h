#pragma once
#include <optional>
#include <string>

#include "tokenizer/tokenizer_file.h"
#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "trainer/options.h"
#include "workbench/runtime/rng.h"

namespace wb::trainer {

// Samples text from the model: generation starts from the end-of-text token, every
// next token drawn from the softmax of row 0's logits at the last position (a full
// forward pass per token, like llm.c's trainer), decoded through llm.c's tokenizer
// file when there is one, printed as ids otherwise.
class Sampler {
 public:
  // rng: the sampler's generator, owned by the loop so that the training state holds it.
  Sampler(const Options& o, const Config& c, Rng& rng);
  std::string sample(Gpt2& model, int B, int T);

 private:
  int len_;
  Rng& rng_;
  std::optional<tokenizer::token_table> table_;
  int eot_ = 0;
};

}  // namespace wb::trainer
