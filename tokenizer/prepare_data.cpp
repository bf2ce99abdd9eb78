// prepare_data: GPT-2 tokenization on the command line. Prepares TinyShakespeare as
// llm.c's token files, writes llm.c's gpt2_tokenizer.bin, and encodes or decodes a text.
// The text and the vocabulary not given (--input, --vocab) are looked up and, where
// nothing holds them, downloaded and checked against their pinned SHA-256
// (tokenizer/data_files.h). Exit codes: 0 ok, 2 bad usage or input (missing or malformed
// files, failed download, a checksum that does not match, unwritable output), 1 a bug.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "base/sha256.h"
#include "tokenizer/bpe.h"
#include "tokenizer/data_files.h"
#include "tokenizer/dataset.h"
#include "tokenizer/io.h"
#include "tokenizer/token_file.h"
#include "tokenizer/tokenizer_file.h"

namespace wb::tokenizer {
namespace {

namespace fs = std::filesystem;

using program::kBadInput;
using program::kOk;

void make_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw error("cannot create the output folder " + dir.string() + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) throw error("the output folder " + dir.string() + " is not a folder");
}

struct options {
  std::string input;
  std::string vocab;
  std::string out;
  std::string url = kTinyShakespeareUrl;
  std::string vocab_url = kGpt2VocabUrl;
  bool url_given = false;        // --url on the command line
  bool vocab_url_given = false;  // --vocab-url on the command line
  std::vector<std::string> sha256;
  std::string tokenizer_file;
};

// The build's data cache (CMake's WB_DATA_DIR), with its ".." resolved for messages.
fs::path data_cache() {
  const std::string cache = WB_DATA_CACHE;
  return cache.empty() ? fs::path() : fs::path(cache).lexically_normal();
}

// The pinned files, with the sources and checksums the command line overrides.
struct files {
  data_file text = tinyshakespeare_file();
  data_file encoder = encoder_json_file();
  data_file merges = vocab_bpe_file();
};

files pinned(const options& o) {
  files f;
  f.text.url = o.url;
  std::string base = o.vocab_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  f.encoder.url = base + "/encoder.json";
  f.merges.url = base + "/vocab.bpe";
  for (const std::string& given : o.sha256) {
    const std::size_t eq = given.find('=');
    const std::string name = given.substr(0, eq), hex = eq == std::string::npos ? "" : given.substr(eq + 1);
    data_file* file = name == f.text.name      ? &f.text
                      : name == f.encoder.name ? &f.encoder
                      : name == f.merges.name  ? &f.merges
                                               : nullptr;
    if (!file || !is_sha256_hex(hex)) {
      const std::string usage =
          "--sha256 takes NAME=HEX, NAME one of tinyshakespeare.txt, encoder.json, vocab.bpe and HEX 64 hexadecimal "
          "digits";
      throw error(usage + " (got '" + given + "')");
    }
    file->sha256.clear();
    for (const char c : hex) file->sha256 += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
  }
  return f;
}

// How to provide the files where there is no network, for the message of a file that
// could not be found or downloaded.
std::string offline_hint(const files& f) {
  std::string hint = "To work offline, fetch these where there is a network into one folder, under these names:";
  for (const data_file* file : {&f.text, &f.encoder, &f.merges}) {
    hint += "\n  " + file->relative + std::string(22 - std::min<std::size_t>(file->relative.size(), 21), ' ') +
            file->url + "\n  " + std::string(22, ' ') + "sha256 " + file->sha256;
  }
  return hint + "\nthen set WB_DATA to that folder, or pass --input FILE and --vocab DIR (used unchecked).";
}

// The lookup for a command that writes into `out` (downloads land there), or for one
// that writes nothing (encode, decode: no download, nothing logged to standard output).
data_lookup lookup_for(const files& f, const fs::path& out, bool url_given) {
  data_lookup l;
  l.wb_data = wb_data_from_environment();
  l.cache = data_cache();
  l.download = out;
  l.url_given = url_given;
  l.log = out.empty() ? nullptr : &std::cout;
  if (out.empty()) {
    l.offline_hint =
        "Pass --vocab DIR (a folder holding encoder.json and vocab.bpe), or set WB_DATA to a folder holding "
        "gpt2/encoder.json and gpt2/vocab.bpe; 'prepare_data tokenizer --out DIR' downloads them into DIR/gpt2.";
  } else {
    l.offline_hint = offline_hint(f);
  }
  return l;
}

// The vocabulary: --vocab as given, else encoder.json and vocab.bpe each looked up
// (and, for a command with an output folder, downloaded into OUT/gpt2).
bpe_tokenizer load_vocabulary(const options& o, const fs::path& out) {
  if (!o.vocab.empty()) return bpe_tokenizer::load(o.vocab);
  const files f = pinned(o);
  const data_lookup l = lookup_for(f, out, o.vocab_url_given);
  const fs::path encoder = find_data_file(f.encoder, l);
  const fs::path merges = find_data_file(f.merges, l);
  return bpe_tokenizer::load(encoder, merges);
}

int cmd_tinyshakespeare(const options& o) {
  const fs::path out = o.out;
  if (o.vocab.empty() || o.input.empty()) make_folder(out);  // downloads land in it
  bpe_tokenizer tokenizer = load_vocabulary(o, out);
  fs::path input = o.input;
  if (input.empty()) {
    const files f = pinned(o);
    input = find_data_file(f.text, lookup_for(f, out, o.url_given));
  }
  const std::string text = read_file(input, "text");
  make_folder(out);
  const token_split split = tinyshakespeare_tokens(text, tokenizer);
  std::cout << "read " << text.size() << " bytes from " << input.string() << ": " << split_sections(text, "\n\n").size()
            << " sections, " << split.val.size() + split.train.size() << " tokens\n";
  const fs::path val = out / "tiny_shakespeare_val.bin", train = out / "tiny_shakespeare_train.bin";
  const fs::path vocab_file = out / "gpt2_tokenizer.bin";
  write_token_file(val, split.val);
  std::cout << "wrote " << val.string() << ": " << split.val.size() << " tokens\n";
  write_token_file(train, split.train);
  std::cout << "wrote " << train.string() << ": " << split.train.size() << " tokens\n";
  write_tokenizer_file(vocab_file, tokenizer);
  std::cout << "wrote " << vocab_file.string() << ": " << tokenizer.vocab_size() << " tokens, end of text "
            << *tokenizer.end_of_text() << "\n";
  return kOk;
}

int cmd_tokenizer(const options& o) {
  if (o.vocab.empty()) make_folder(o.out);  // downloads land in it
  const bpe_tokenizer tokenizer = load_vocabulary(o, o.out);
  make_folder(o.out);
  const fs::path path = fs::path(o.out) / "gpt2_tokenizer.bin";
  write_tokenizer_file(path, tokenizer);
  std::cout << "wrote " << path.string() << ": " << tokenizer.vocab_size() << " tokens, end of text "
            << *tokenizer.end_of_text() << "\n";
  return kOk;
}

std::string read_input(const std::string& file) {
  if (!file.empty() && file != "-") return read_file(file, "input");
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

void write_stdout(const std::string& bytes) {
  std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::cout.flush();
  if (!std::cout) throw error("cannot write to standard output");
}

int cmd_encode(const options& o) {
  bpe_tokenizer tokenizer = load_vocabulary(o, {});
  const std::vector<token_id> ids = tokenizer.encode(read_input(o.input));
  std::string line;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (k > 0) line += ' ';
    line += std::to_string(ids[k]);
  }
  line += '\n';
  write_stdout(line);
  return kOk;
}

// Ids separated by white space or commas; brackets are ignored, so a JSON list works.
// Errors name the byte offset of the offending text and show its bytes escaped (the
// input may be binary); ids must lie below vocab_size.
std::vector<token_id> parse_ids(const std::string& text, std::size_t vocab_size) {
  std::vector<token_id> ids;
  const auto separator = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '[' || c == ']';
  };
  for (std::size_t pos = 0; pos < text.size();) {
    if (separator(text[pos])) {
      ++pos;
      continue;
    }
    std::size_t end = pos;
    while (end < text.size() && !separator(text[end])) ++end;
    token_id id = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + end, id);
    const std::string shown = "'" + escape_bytes(text.substr(pos, std::min<std::size_t>(end - pos, 40))) + "'" +
                              (end - pos > 40 ? "..." : "");
    if (ec != std::errc() || ptr != text.data() + end) {
      throw error("byte " + std::to_string(pos) + " of the ids: " + shown + " is not a token id");
    }
    if (id < 0 || static_cast<std::size_t>(id) >= vocab_size) {
      throw error("byte " + std::to_string(pos) + " of the ids: token id " + std::to_string(id) +
                  " is outside the vocabulary (0.." + std::to_string(vocab_size - 1) + ")");
    }
    ids.push_back(id);
    pos = end;
  }
  return ids;
}

int cmd_decode(const options& o) {
  if (!o.vocab.empty() && !o.tokenizer_file.empty()) {
    throw error("decode takes one of --vocab DIR and --tokenizer FILE, not both");
  }
  if (!o.tokenizer_file.empty()) {
    const token_table table = token_table::read(o.tokenizer_file);
    write_stdout(table.decode(parse_ids(read_input(o.input), table.size())));
  } else {
    const bpe_tokenizer tokenizer = load_vocabulary(o, {});
    write_stdout(tokenizer.decode(parse_ids(read_input(o.input), tokenizer.vocab_size())));
  }
  return kOk;
}

int run(int argc, char** argv) {
  CLI::App app{"prepare_data: GPT-2 byte-level BPE tokenization and llm.c data files."};
  app.require_subcommand(1);
  app.footer(
      "Data: a text or vocabulary not given with --input or --vocab is looked up in $WB_DATA (a folder holding\n"
      "tinyshakespeare.txt, gpt2/encoder.json, gpt2/vocab.bpe), then in the build's data cache (" +
      (data_cache().empty() ? std::string("none") : data_cache().string()) +
      ",\nused where it exists), then in OUT (an earlier download), else downloaded into OUT; every file looked up\n"
      "or downloaded must have its pinned SHA-256.\n"
      "Exit codes: 0 ok, 2 bad usage or input (missing or malformed files, failed download, a checksum that does\n"
      "not match, unwritable output).\n"
      "Examples:\n"
      "  prepare_data tinyshakespeare --out data\n"
      "  WB_DATA=/mnt/offline prepare_data tinyshakespeare --out data\n"
      "  prepare_data tinyshakespeare --input my.txt --vocab data/gpt2 --out data\n"
      "  echo 'Hello world' | prepare_data encode --vocab data/gpt2\n"
      "  echo '15496 995' | prepare_data decode --tokenizer data/gpt2_tokenizer.bin");
  const std::string vocab_help = "folder holding encoder.json and vocab.bpe, used as it is (default: looked up)";
  const std::string sha256_help =
      "the SHA-256 a looked-up or downloaded file must have instead of the pinned one (NAME: tinyshakespeare.txt, "
      "encoder.json, vocab.bpe): for a mirror or a test's server";
  const std::string vocab_url_help =
      "download the vocabulary from URL/encoder.json and URL/vocab.bpe rather than look it up";
  options o;

  auto* shakespeare = app.add_subcommand(
      "tinyshakespeare",
      "write tiny_shakespeare_val.bin, tiny_shakespeare_train.bin (llm.c token files) and gpt2_tokenizer.bin");
  shakespeare->add_option("--input", o.input, "the text, used as it is (default: TinyShakespeare, looked up)");
  shakespeare->add_option("--vocab", o.vocab, vocab_help);
  shakespeare->add_option("--out", o.out, "output folder (created if missing; downloads land in it)")->required();
  CLI::Option* url = shakespeare->add_option("--url", o.url, "download the text from URL rather than look it up")
                         ->capture_default_str();
  CLI::Option* vocab_url = shakespeare->add_option("--vocab-url", o.vocab_url, vocab_url_help)->capture_default_str();
  shakespeare->add_option("--sha256", o.sha256, sha256_help)->type_name("NAME=HEX");

  auto* tokenizer = app.add_subcommand("tokenizer", "write gpt2_tokenizer.bin (llm.c's tokenizer file) only");
  tokenizer->add_option("--vocab", o.vocab, vocab_help);
  tokenizer->add_option("--out", o.out, "output folder (created if missing; downloads land in it)")->required();
  CLI::Option* tokenizer_vocab_url =
      tokenizer->add_option("--vocab-url", o.vocab_url, vocab_url_help)->capture_default_str();
  tokenizer->add_option("--sha256", o.sha256, sha256_help)->type_name("NAME=HEX");

  auto* encode = app.add_subcommand("encode", "print the token ids of a text");
  encode->add_option("file", o.input, "the text (default or '-': standard input)");
  encode->add_option("--vocab", o.vocab, vocab_help + "; never downloaded here");

  auto* decode = app.add_subcommand("decode", "read token ids (white space or commas between them), print the text");
  decode->add_option("file", o.input, "the ids (default or '-': standard input)");
  decode->add_option("--vocab", o.vocab, vocab_help + "; never downloaded here");
  decode->add_option("--tokenizer", o.tokenizer_file, "a gpt2_tokenizer.bin instead of --vocab");

  const auto is_command = [&](const std::string& name) {
    for (const CLI::App* sub : {shakespeare, tokenizer, encode, decode}) {
      if (sub->get_name() == name) return true;
    }
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::cerr << "prepare_data: error: unknown command '" << argv[1]
              << "' (commands: tinyshakespeare, tokenizer, encode, decode)\n";
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "prepare_data: error: " << e.what() << "\nRun 'prepare_data --help' for the commands.\n";
    return kBadInput;
  }
  pinned(o);  // a bad --sha256 is bad usage, whether or not a file is looked up
  o.url_given = url->count() > 0;
  o.vocab_url_given = vocab_url->count() > 0 || tokenizer_vocab_url->count() > 0;

  if (*shakespeare) return cmd_tinyshakespeare(o);
  if (*tokenizer) return cmd_tokenizer(o);
  if (*encode) return cmd_encode(o);
  if (*decode) return cmd_decode(o);
  return kBadInput;
}

// prepare_data's differences from wb's exit codes: the tokenizer's error is bad
// input, and a bug is exit 1 (it has no failed checks to tell it from).
program::ExitPolicy exit_policy() {
  program::ExitPolicy p;
  p.program = "prepare_data";
  p.internal_error_code = 1;
  p.own = [](const std::exception_ptr& e, std::ostream& err) -> std::optional<int> {
    try {
      std::rethrow_exception(e);
    } catch (const error& x) {
      err << "prepare_data: error: " << x.what() << "\n";
      return kBadInput;
    } catch (...) {
      return std::nullopt;
    }
  };
  return p;
}

}  // namespace
}  // namespace wb::tokenizer

int main(int argc, char** argv) {
  return wb::program::guarded_main(
      wb::tokenizer::exit_policy(), [&] { return wb::tokenizer::run(argc, argv); }, std::cerr);
}
