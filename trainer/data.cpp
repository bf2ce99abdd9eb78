#include "trainer/data.h"

#include <array>
#include <fstream>
#include <numeric>

#include "kernels/errors.h"

namespace wb::trainer {
namespace {

constexpr int32_t kTokenMagic = 20240520;
constexpr int32_t kTokenVersion = 1;

}  // namespace

TokenFile read_tokens(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the token file " + path + ": no such file or not readable");
  std::array<int32_t, 256> header{};
  in.read(reinterpret_cast<char*>(header.data()), sizeof(header));
  if (!in) throw UsageError(path + ": truncated token file (no complete 1024-byte header)");
  if (header[0] != kTokenMagic)
    throw UsageError(path + ": not an llm.c token file (magic " + std::to_string(header[0]) + ", expected " +
                     std::to_string(kTokenMagic) + ")");
  if (header[1] != kTokenVersion)
    throw UsageError(path + ": token file version " + std::to_string(header[1]) + ", expected 1");
  if (header[2] < 0) throw UsageError(path + ": negative token count");
  TokenFile f;
  f.path = path;
  f.tokens.resize(std::size_t(header[2]));
  in.read(reinterpret_cast<char*>(f.tokens.data()), std::streamsize(f.tokens.size() * sizeof(uint16_t)));
  if (in.gcount() != std::streamsize(f.tokens.size() * sizeof(uint16_t)))
    throw UsageError(path + ": truncated token file: the header announces " + std::to_string(header[2]) +
                     " tokens, it holds " + std::to_string(in.gcount() / 2));
  return f;
}

void write_tokens(const std::string& path, const std::vector<uint16_t>& tokens) {
  std::array<int32_t, 256> header{};
  header[0] = kTokenMagic;
  header[1] = kTokenVersion;
  header[2] = int32_t(tokens.size());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), sizeof(header));
  out.write(reinterpret_cast<const char*>(tokens.data()), std::streamsize(tokens.size() * sizeof(uint16_t)));
  if (!out) throw UsageError("cannot write the token file " + path);
}

DataLoader::DataLoader(const TokenFile& file, int B, int T, int V, bool shuffle, uint64_t seed)
    : file_(file), span_(int64_t(B) * T), shuffle_(shuffle), rng_(seed, "data-loader") {
  const int64_t count = int64_t(file.tokens.size());
  if (count < span_ + 1)
    throw UsageError(file.path + " holds " + std::to_string(count) +
                     " tokens, less than one batch of B*T+1 = " + std::to_string(span_ + 1));
  for (int64_t i = 0; i < count; ++i)
    if (file.tokens[i] >= V)
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

void DataLoader::next(int32_t* inputs, int32_t* targets) {
  if (next_ == batches_) start_pass();  // the next batch would run past the end: wrap
  const int64_t start = order_[next_++] * span_;
  for (int64_t i = 0; i < span_; ++i) {
    inputs[i] = file_.tokens[start + i];
    targets[i] = file_.tokens[start + i + 1];
  }
}

}  // namespace wb::trainer
