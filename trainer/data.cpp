#include "trainer/data.h"

#include <numeric>

#include "base/errors.h"
#include "tokenizer/token_file.h"

namespace wb::trainer {

TokenFile read_tokens(const std::string& path) {
  try {
    return TokenFile{path, tokenizer::read_token_file(path)};
  } catch (const tokenizer::error& e) {
    throw UsageError(e.what());
  }
}

void write_tokens(const std::string& path, const std::vector<int32_t>& tokens) {
  try {
    tokenizer::write_token_file(path, tokens);
  } catch (const tokenizer::error& e) {
    throw UsageError(e.what());
  }
}

DataLoader::DataLoader(const TokenFile& file, int B, int T, int V, bool shuffle, uint64_t seed)
    : file_(file), span_(int64_t(B) * T), shuffle_(shuffle), rng_(seed, "data-loader") {
  const int64_t count = int64_t(file.tokens.size());
  if (count < span_ + 1)
    throw UsageError(file.path + " holds " + std::to_string(count) +
                     " tokens, less than one batch of B*T+1 = " + std::to_string(span_ + 1));
  for (int64_t i = 0; i < count; ++i)
    if (file.tokens[i] < 0 || file.tokens[i] >= V)
      throw UsageError(file.path + ": token " + std::to_string(file.tokens[i]) + " at position " + std::to_string(i) +
                       " is outside the model's vocabulary of " + std::to_string(V));
  batches_ = (count - 1) / span_;
  start_pass();
}

void DataLoader::start_pass() {
  order_.resize(batches_);
  std::iota(order_.begin(), order_.end(), 0);
  if (shuffle_) {
    for (int64_t i = batches_ - 1; i > 0; --i) std::swap(order_[i], order_[rng_.below(i + 1)]);
  }
  next_ = 0;
}

void DataLoader::reset() { start_pass(); }

void DataLoader::restore(const Position& p) {
  if (int64_t(p.order.size()) != batches_)
    throw UsageError(file_.path + " holds " + std::to_string(batches_) + " batches per pass, the saved position " +
                     std::to_string(p.order.size()));
  std::vector<bool> seen(batches_, false);
  for (int64_t b : p.order) {
    if (b < 0 || b >= batches_ || seen[b])
      throw UsageError("the saved batch order is not a permutation of the " + std::to_string(batches_) +
                       " batches of " + file_.path);
    seen[b] = true;
  }
  if (p.next < 0 || p.next > batches_)
    throw UsageError("the saved position " + std::to_string(p.next) + " lies outside the " + std::to_string(batches_) +
                     " batches of " + file_.path);
  order_ = p.order;
  next_ = p.next;
  rng_.restore(p.rng);
}

void DataLoader::next(int32_t* inputs, int32_t* targets) {
  if (next_ == batches_) start_pass();  // the next batch would run past the end: wrap
  const int64_t start = order_[next_++] * span_;
  for (int64_t i = 0; i < span_; ++i) {
    inputs[i] = file_.tokens[start + i];
    targets[i] = file_.tokens[start + i + 1];
  }
}

}  // namespace wb::trainer
