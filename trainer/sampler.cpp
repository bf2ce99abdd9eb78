#include "trainer/sampler.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "base/errors.h"

namespace wb::trainer {

Sampler::Sampler(const Options& o, const Config& c, Rng& rng) : len_(std::min(o.sample_len, o.seq_len)), rng_(rng) {
  std::string path = o.tokenizer;
  if (path.empty() && !o.train.empty()) {
    const auto guess = std::filesystem::path(o.train).parent_path() / "gpt2_tokenizer.bin";
    if (std::filesystem::exists(guess)) path = guess.string();
  }
  if (!path.empty()) {
    try {
      table_ = tokenizer::token_table::read(path);
    } catch (const tokenizer::error& e) {
      throw UsageError(e.what());
    }
    if (table_->size() != std::size_t(c.V))
      throw UsageError(path + " holds " + std::to_string(table_->size()) + " tokens, the model's vocabulary is " +
                       std::to_string(c.V));
    eot_ = table_->end_of_text();
  } else {
    std::cout << "no tokenizer file (--tokenizer, or gpt2_tokenizer.bin beside --train): samples are printed as "
                 "token ids\n";
    eot_ = c.V > 50256 ? 50256 : c.V - 1;
  }
}
std::string Sampler::sample(Gpt2& model, int B, int T) {
  const Config& c = model.config();
  std::vector<int32_t> tokens(int64_t(B) * T, eot_);
  std::vector<tokenizer::token_id> out;
  for (int t = 1; t < len_; ++t) {
    model.forward(tokens.data(), nullptr);
    const float* logits = model.captured_logits().data() + int64_t(t - 1) * c.Vp;  // row 0
    double max = logits[0];
    for (int i = 1; i < c.V; ++i) max = std::max(max, double(logits[i]));
    double sum = 0;
    for (int i = 0; i < c.V; ++i) sum += std::exp(logits[i] - max);
    double coin = rng_.uniform(0.0, sum), acc = 0;
    int next = c.V - 1;
    for (int i = 0; i < c.V; ++i) {
      acc += std::exp(logits[i] - max);
      if (coin < acc) {
        next = i;
        break;
      }
    }
    tokens[t] = next;
    out.push_back(next);
  }
  if (table_) return table_->decode(out);
  std::string ids;
  for (auto id : out) ids += (ids.empty() ? "" : " ") + std::to_string(id);
  return ids;
}
}  // namespace wb::trainer
