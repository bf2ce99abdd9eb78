#pragma once
// A GPT-2-format vocabulary small enough to write in a test, for the tests that run
// prepare_data without the real one (which lives outside the repository and may be
// absent): encoder.json with the 256 byte tokens (ids 0-255, keys in GPT-2's
// byte-to-unicode alphabet, computed here as GPT-2's encoder.py does), "hi" (256) and
// "<|endoftext|>" (257); vocab.bpe with the one merge "h i".
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace wb::testing {

struct TinyVocabulary {
  std::string encoder_json;
  std::string vocab_bpe;
  static constexpr int kSize = 258;
};

inline TinyVocabulary tiny_vocabulary() {
  // GPT-2's bytes_to_unicode: '!'..'~', U+00A1..U+00AC and U+00AE..U+00FF stand for
  // themselves; the other bytes, in order, for U+0100 upwards.
  const auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); };
  const auto utf8 = [](unsigned cp) {
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {  // below U+0800: two bytes are enough for this alphabet
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  TinyVocabulary v;
  std::string json = "{";
  unsigned next = 256;
  for (int b = 0; b < 256; ++b) {
    const unsigned cp = printable(b) ? static_cast<unsigned>(b) : next++;
    std::string key = utf8(cp);
    if (key == "\"" || key == "\\") key = "\\" + key;
    json += "\"" + key + "\": " + std::to_string(b) + ", ";
  }
  v.encoder_json = json + "\"hi\": 256, \"<|endoftext|>\": 257}";
  v.vocab_bpe = "#version: 0.2\nh i\n";
  return v;
}

inline void write_tiny_vocabulary(const std::filesystem::path& dir) {
  const TinyVocabulary v = tiny_vocabulary();
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "encoder.json", std::ios::binary) << v.encoder_json;
  std::ofstream(dir / "vocab.bpe", std::ios::binary) << v.vocab_bpe;
  if (!std::filesystem::is_regular_file(dir / "vocab.bpe")) throw std::runtime_error("cannot write " + dir.string());
}

}  // namespace wb::testing
