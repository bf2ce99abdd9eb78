// Byte-level BPE: loading encoder.json and vocab.bpe into raw-byte tokens and id-pair
// merges, and the merge loop. Semantics of a merge step (as in GPT-2's encoder): find
// the adjacent pair of lowest rank, merge all its non-overlapping occurrences from left
// to right, repeat until no adjacent pair has a rank.
#include "tokenizer/bpe.h"

#include <array>
#include <cstdio>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>

#include "tokenizer/io.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/unicode.h"

namespace wb::tokenizer {
namespace {

constexpr std::size_t kQueueFrom = 48;        // pieces of this many bytes or more merge with the queue
constexpr std::size_t kCachedUpTo = 64;       // pieces of at most this many bytes are cached
constexpr std::size_t kCacheLimit = 1 << 18;  // entries; the cache starts afresh beyond this

bool printable_latin1(unsigned b) { return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae; }

struct byte_alphabet {
  std::array<char32_t, 256> code_point{};
  std::array<unsigned char, 324> byte{};  // code point -> byte, for the code points in use
  std::array<bool, 324> used{};
};

byte_alphabet make_byte_alphabet() {
  byte_alphabet a;
  char32_t next_extra = 256;
  for (unsigned b = 0; b < 256; ++b) {
    const char32_t cp = printable_latin1(b) ? b : next_extra++;
    a.code_point[b] = cp;
    a.byte[cp] = static_cast<unsigned char>(b);
    a.used[cp] = true;
  }
  return a;
}

const byte_alphabet& alphabet() {
  static const byte_alphabet a = make_byte_alphabet();
  return a;
}

// The raw bytes a vocabulary string stands for; throws error naming `where`.
std::string unmap_bytes(std::string_view mapped, const std::string& where) {
  const byte_alphabet& a = alphabet();
  std::string raw;
  raw.reserve(mapped.size());
  for (std::size_t pos = 0; pos < mapped.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(mapped, pos, cp);
    if (len == 0) throw error(where + ": not valid UTF-8");
    if (cp >= a.used.size() || !a.used[cp]) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
      throw error(where + ": character " + hex + " is not one of GPT-2's 256 byte characters");
    }
    raw.push_back(static_cast<char>(a.byte[cp]));
    pos += len;
  }
  return raw;
}

std::uint64_t pair_key(token_id left, token_id right) {
  return (std::uint64_t{static_cast<std::uint32_t>(left)} << 32) | static_cast<std::uint32_t>(right);
}

}  // namespace

char32_t byte_to_code_point(unsigned char b) { return alphabet().code_point[b]; }

bpe_tokenizer bpe_tokenizer::load(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw error("vocabulary folder " + dir.string() + " does not exist (it must hold encoder.json and vocab.bpe)");
  }
  return load(dir / "encoder.json", dir / "vocab.bpe");
}

bpe_tokenizer bpe_tokenizer::load(const std::filesystem::path& encoder_json, const std::filesystem::path& vocab_bpe) {
  const std::string encoder_text = read_file(encoder_json, "GPT-2 vocabulary");
  const std::string merges_text = read_file(vocab_bpe, "GPT-2 merge list");
  return parse(encoder_text, merges_text, encoder_json.string(), vocab_bpe.string());
}

bpe_tokenizer bpe_tokenizer::parse(std::string_view encoder_json, std::string_view vocab_bpe,
                                   const std::string& encoder_name, const std::string& vocab_name) {
  bpe_tokenizer t;

  // encoder.json: {"token": id, ...} with ids 0..n-1, each once.
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(encoder_json);
  } catch (const nlohmann::json::parse_error& e) {
    throw error(encoder_name + ": malformed JSON: " + e.what());
  }
  if (!json.is_object() || json.empty()) {
    throw error(encoder_name + ": expected a JSON object mapping tokens to ids");
  }
  const std::size_t n = json.size();
  if (n > static_cast<std::size_t>(std::numeric_limits<token_id>::max()))
    throw error(encoder_name + ": too many tokens");
  t.token_bytes_.resize(n);
  std::vector<bool> seen(n, false);
  std::unordered_map<std::string, token_id> id_of;
  id_of.reserve(n);
  for (const auto& [key, value] : json.items()) {
    const std::string where = encoder_name + ": token \"" + key + "\"";
    if (!value.is_number_integer()) throw error(where + ": its id is not an integer");
    const auto id = value.get<std::int64_t>();
    if (id < 0 || static_cast<std::uint64_t>(id) >= n) {
      throw error(where + ": id " + std::to_string(id) + " is outside 0.." + std::to_string(n - 1) +
                  " (ids must number the tokens densely)");
    }
    if (seen[static_cast<std::size_t>(id)]) throw error(where + ": id " + std::to_string(id) + " is used twice");
    seen[static_cast<std::size_t>(id)] = true;
    std::string raw = unmap_bytes(key, where);
    if (!id_of.emplace(raw, static_cast<token_id>(id)).second) {
      throw error(where + ": the same bytes as token " + std::to_string(id_of[raw]));
    }
    t.token_bytes_[static_cast<std::size_t>(id)] = std::move(raw);
  }
  for (unsigned b = 0; b < 256; ++b) {
    const auto it = id_of.find(std::string(1, static_cast<char>(b)));
    if (it == id_of.end()) throw error(encoder_name + ": no token for the single byte " + std::to_string(b));
    t.byte_token_[b] = it->second;
  }
  if (const auto it = id_of.find("<|endoftext|>"); it != id_of.end()) t.end_of_text_ = it->second;

  // vocab.bpe: "#version ..." first, then one merge "left right" a line, best first.
  std::size_t line_no = 0;
  std::uint32_t rank = 0;
  t.merges_.reserve(n);
  for (std::size_t pos = 0; pos < vocab_bpe.size();) {
    std::size_t eol = vocab_bpe.find('\n', pos);
    if (eol == std::string_view::npos) eol = vocab_bpe.size();
    std::string_view line = vocab_bpe.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.substr(0, 8) == "#version")) continue;
    const std::string where = vocab_name + " line " + std::to_string(line_no);
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos) {
      throw error(where + ": expected two tokens separated by one space, got \"" + std::string(line) + "\"");
    }
    const std::string left = unmap_bytes(line.substr(0, space), where);
    const std::string right = unmap_bytes(line.substr(space + 1), where);
    const auto l = id_of.find(left), r = id_of.find(right), m = id_of.find(left + right);
    if (l == id_of.end() || r == id_of.end() || m == id_of.end()) {
      throw error(where + ": \"" + std::string(line) + "\" names a token that encoder.json does not have");
    }
    if (!t.merges_.emplace(pair_key(l->second, r->second), merge{rank, m->second}).second) {
      throw error(where + ": the merge \"" + std::string(line) + "\" is listed twice");
    }
    ++rank;
  }
  if (t.merges_.empty()) throw error(vocab_name + ": no merges");
  return t;
}

const bpe_tokenizer::merge* bpe_tokenizer::find_merge(token_id left, token_id right) const {
  const auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void bpe_tokenizer::merge_quadratic(std::vector<token_id>& ids) const {
  while (ids.size() > 1) {
    const merge* best = nullptr;
    token_id best_left = 0, best_right = 0;
    for (std::size_t k = 0; k + 1 < ids.size(); ++k) {
      const merge* m = find_merge(ids[k], ids[k + 1]);
      if (m && (!best || m->rank < best->rank)) {
        best = m;
        best_left = ids[k];
        best_right = ids[k + 1];
      }
    }
    if (!best) break;
    std::size_t w = 0;
    for (std::size_t k = 0; k < ids.size();) {
      if (k + 1 < ids.size() && ids[k] == best_left && ids[k + 1] == best_right) {
        ids[w++] = best->result;
        k += 2;
      } else {
        ids[w++] = ids[k++];
      }
    }
    ids.resize(w);
  }
}

// The same merges in O(n log n) for long pieces: the symbols form a linked list, and a
// min-queue holds (rank, position) of every adjacent pair that has a merge. All pairs of
// the lowest rank are merged left to right before the pairs that those merges created
// join the queue, which is exactly one step of the plain algorithm. Entries made stale
// by a merge are recognised when they come out (their tokens no longer match).
void bpe_tokenizer::merge_with_queue(std::vector<token_id>& ids) const {
  struct entry {
    std::uint32_t rank;
    std::int32_t pos;
    token_id left, right;
    bool operator>(const entry& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  if (ids.size() < 2) return;
  const auto n = static_cast<std::int32_t>(ids.size());
  std::vector<std::int32_t> prev(ids.size()), next(ids.size());
  for (std::int32_t k = 0; k < n; ++k) {
    prev[k] = k - 1;
    next[k] = k + 1 < n ? k + 1 : -1;
  }
  std::priority_queue<entry, std::vector<entry>, std::greater<entry>> queue;
  std::vector<entry> created;
  auto consider = [&](std::int32_t pos, std::vector<entry>& into) {
    const std::int32_t right = next[pos];
    if (right < 0) return;
    if (const merge* m = find_merge(ids[pos], ids[right])) into.push_back({m->rank, pos, ids[pos], ids[right]});
  };
  for (std::int32_t k = 0; k + 1 < n; ++k) consider(k, created);
  for (const entry& e : created) queue.push(e);
  created.clear();

  while (!queue.empty()) {
    const std::uint32_t rank = queue.top().rank;
    while (!queue.empty() && queue.top().rank == rank) {
      const entry e = queue.top();
      queue.pop();
      const std::int32_t right = next[e.pos];
      // A merged-away symbol keeps its tokens but is unlinked: prev of a live symbol
      // never points at it, and its own next is cut below.
      if (right < 0 || ids[e.pos] != e.left || ids[right] != e.right || prev[right] != e.pos) continue;
      ids[e.pos] = find_merge(e.left, e.right)->result;
      next[e.pos] = next[right];
      if (next[right] >= 0) prev[next[right]] = e.pos;
      next[right] = -1;
      prev[right] = -1;
      if (prev[e.pos] >= 0) consider(prev[e.pos], created);
      consider(e.pos, created);
    }
    for (const entry& e : created) queue.push(e);
    created.clear();
  }
  std::size_t w = 0;
  for (std::int32_t k = 0; k >= 0; k = next[k]) ids[w++] = ids[k];
  ids.resize(w);
}

void bpe_tokenizer::encode_piece_to(std::string_view piece, std::vector<token_id>& out) const {
  std::vector<token_id> ids(piece.size());
  for (std::size_t k = 0; k < piece.size(); ++k) ids[k] = byte_token_[static_cast<unsigned char>(piece[k])];
  if (ids.size() < kQueueFrom) {
    merge_quadratic(ids);
  } else {
    merge_with_queue(ids);
  }
  out.insert(out.end(), ids.begin(), ids.end());
}

std::vector<token_id> bpe_tokenizer::encode_piece(std::string_view piece, bool quadratic) const {
  std::vector<token_id> ids(piece.size());
  for (std::size_t k = 0; k < piece.size(); ++k) ids[k] = byte_token_[static_cast<unsigned char>(piece[k])];
  if (quadratic) {
    merge_quadratic(ids);
  } else {
    merge_with_queue(ids);
  }
  return ids;
}

void bpe_tokenizer::encode(std::string_view text, std::vector<token_id>& out) {
  pretokenizer pieces(text);
  std::string_view piece;
  std::string key;
  while (pieces.next(piece)) {
    if (piece.size() > kCachedUpTo) {
      encode_piece_to(piece, out);
      continue;
    }
    key.assign(piece);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      if (cache_.size() >= kCacheLimit) cache_.clear();
      std::vector<token_id> ids;
      encode_piece_to(piece, ids);
      it = cache_.emplace(key, std::move(ids)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
}

std::vector<token_id> bpe_tokenizer::encode(std::string_view text) {
  std::vector<token_id> ids;
  encode(text, ids);
  return ids;
}

const std::string& bpe_tokenizer::token_bytes(token_id id) const {
  return token_bytes_[vocabulary_index(id, token_bytes_.size())];
}

void bpe_tokenizer::decode(const token_id* ids, std::size_t n, std::string& out) const {
  for (std::size_t k = 0; k < n; ++k) out += token_bytes(ids[k]);
}

std::string bpe_tokenizer::decode(const std::vector<token_id>& ids) const {
  std::string out;
  decode(ids.data(), ids.size(), out);
  return out;
}

}  // namespace wb::tokenizer
