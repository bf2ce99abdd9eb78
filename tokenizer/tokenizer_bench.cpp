// tokenizer_bench: throughput of the GPT-2 tokenizer on one core, in MB/s of input text
// (10^6 bytes a second), timed by Google Benchmark. Built but not run by ctest:
//
//   build/tokenizer_bench [--input FILE] [--vocab DIR] [Google Benchmark flags]
//
// Defaults: TinyShakespeare and the GPT-2 vocabulary in $WB_DATA (a data folder: a
// prepare_data --out folder that downloaded them is one), else in the build's offline
// data cache (WB_DATA_DIR, by default ../shared/data); the benchmark never downloads.
// Cases:
//   load         parse encoder.json and vocab.bpe
//   pretokenize  the regex split alone
//   encode_cold  encode the whole text with an empty piece cache (a first encoding)
//   encode_warm  encode it again with the cache filled by earlier iterations
//   prepare      TinyShakespeare's sections, end-of-text tokens and splits (cold cache)
//   decode       ids back to the text
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "tokenizer/bpe.h"
#include "tokenizer/dataset.h"
#include "tokenizer/io.h"
#include "tokenizer/pretokenize.h"

namespace {

using namespace wb::tokenizer;

// $WB_DATA when set, else the build's data cache.
std::string data_folder() {
  const char* env = std::getenv("WB_DATA");
  return env && *env ? env : WB_DATA_DIR;
}

std::string g_input = data_folder() + "/tinyshakespeare.txt";
std::string g_vocab = data_folder() + "/gpt2";

const std::string& text() {
  static const std::string t = read_file(g_input, "text");
  return t;
}

bpe_tokenizer& tokenizer() {
  static bpe_tokenizer t = bpe_tokenizer::load(g_vocab);
  return t;
}

void count_bytes(benchmark::State& state, std::size_t bytes) {
  const double total = static_cast<double>(state.iterations()) * static_cast<double>(bytes);
  state.counters["MB/s"] = benchmark::Counter(total / 1e6, benchmark::Counter::kIsRate);
}

void load(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(bpe_tokenizer::load(g_vocab).vocab_size());
}

void pretokenize_text(benchmark::State& state) {
  std::size_t pieces = 0;
  for (auto _ : state) {
    pretokenizer p(text());
    std::string_view piece;
    pieces = 0;
    while (p.next(piece)) ++pieces;
    benchmark::DoNotOptimize(pieces);
  }
  state.counters["pieces"] = static_cast<double>(pieces);
  count_bytes(state, text().size());
}

// Encoding the text with the cache of merged words emptied before each run (cold), or
// filled by an encoding before the first (warm).
void encode(benchmark::State& state, bool cold) {
  std::vector<token_id> ids;
  if (!cold) tokenizer().encode(text(), ids);
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      tokenizer().clear_cache();
      state.ResumeTiming();
    }
    ids.clear();  // constant time: token ids have no destructor
    tokenizer().encode(text(), ids);
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["tokens"] = static_cast<double>(ids.size());
  count_bytes(state, text().size());
}

void prepare(benchmark::State& state) {
  std::size_t tokens = 0;
  for (auto _ : state) {
    state.PauseTiming();
    tokenizer().clear_cache();
    state.ResumeTiming();
    const token_split split = tinyshakespeare_tokens(text(), tokenizer());
    tokens = split.val.size() + split.train.size();
  }
  state.counters["tokens"] = static_cast<double>(tokens);
  count_bytes(state, text().size());
}

void decode(benchmark::State& state) {
  const std::vector<token_id> ids = tokenizer().encode(text());
  for (auto _ : state) benchmark::DoNotOptimize(tokenizer().decode(ids).size());
  count_bytes(state, text().size());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int k = 1; k < argc; ++k) {
    const bool has_value = k + 1 < argc;
    if (std::strcmp(argv[k], "--input") == 0 && has_value) {
      g_input = argv[++k];
    } else if (std::strcmp(argv[k], "--vocab") == 0 && has_value) {
      g_vocab = argv[++k];
    } else {
      std::cerr << "tokenizer_bench: unknown argument '" << argv[k] << "'\n"
                << "usage: tokenizer_bench [--input FILE] [--vocab DIR] [Google Benchmark flags]\n";
      return 2;
    }
  }
  try {
    const std::size_t bytes = text().size(), tokens = tokenizer().vocab_size();  // before printing: they may throw
    std::cout << "input " << g_input << ": " << bytes << " bytes; vocabulary " << g_vocab << ": " << tokens
              << " tokens\n";
  } catch (const error& e) {
    std::cerr << "tokenizer_bench: error: " << e.what()
              << "\n(pass --input FILE and --vocab DIR, or set WB_DATA to a folder holding tinyshakespeare.txt and "
                 "gpt2/: 'prepare_data tinyshakespeare --out DIR' downloads them into DIR)\n";
    return 2;
  }
  benchmark::RegisterBenchmark("load", load)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("pretokenize", pretokenize_text)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("encode_cold", encode, true)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("encode_warm", encode, false)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("prepare", prepare)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("decode", decode)->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
