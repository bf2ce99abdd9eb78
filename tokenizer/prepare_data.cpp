// prepare_data: GPT-2 tokenization on the command line. Prepares TinyShakespeare as
// llm.c's token files (downloading the text when no --input is given), writes llm.c's
// gpt2_tokenizer.bin, and encodes or decodes a text. Exit codes: 0 ok, 2 bad usage or
// input (missing or malformed files, failed download, unwritable output), 1 a bug.
#include <spawn.h>
#include <sys/wait.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "kernels/exit_codes.h"
#include "tokenizer/bpe.h"
#include "tokenizer/dataset.h"
#include "tokenizer/io.h"
#include "tokenizer/token_file.h"
#include "tokenizer/tokenizer_file.h"

extern char** environ;

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

std::string curl_failure(int code) {
  switch (code) {
    case 6:
      return "could not resolve the host";
    case 7:
      return "could not connect";
    case 22:
      return "the server answered with an HTTP error";
    case 28:
      return "timed out";
    case 35:
    case 60:
      return "TLS failed";
    default:
      return "curl exit code " + std::to_string(code);
  }
}

// Downloads url to path with curl (no shell in between); throws error on failure.
void download(const std::string& url, const fs::path& path) {
  const fs::path part = path.string() + ".part";
  const std::string part_name = part.string();
  std::vector<std::string> args = {"curl", "--fail",     "--silent", "--show-error", "--location", "--connect-timeout",
                                   "20",   "--max-time", "300",      "--output",     part_name,    url};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout << "downloading " << url << "\n" << std::flush;
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, "curl", nullptr, nullptr, argv.data(), environ);
  if (spawn_error != 0) {
    throw error("cannot download " + url + ": cannot run curl (" + std::strerror(spawn_error) +
                "); install curl, or pass the text with --input FILE");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw error("cannot download " + url + ": waiting for curl failed");
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    std::error_code ignored;
    fs::remove(part, ignored);
    throw error("cannot download " + url + " (" + curl_failure(code) +
                "; is there a network here?). Pass the text with --input FILE instead, e.g. "
                "--input ../shared/data/tinyshakespeare.txt");
  }
  std::error_code ec;
  fs::rename(part, path, ec);
  if (ec) throw error("cannot write " + path.string() + ": " + ec.message());
}

struct options {
  std::string input;
  std::string vocab;
  std::string out;
  std::string url = kTinyShakespeareUrl;
  std::string tokenizer_file;
};

int cmd_tinyshakespeare(const options& o) {
  bpe_tokenizer tokenizer = bpe_tokenizer::load(o.vocab);
  const fs::path out = o.out;
  fs::path input = o.input;
  std::string text;
  if (o.input.empty()) {
    make_folder(out);
    input = out / "tinyshakespeare.txt";
    std::error_code ec;
    if (fs::is_regular_file(input, ec)) {
      std::cout << "using " << input.string() << ", downloaded before\n";
    } else {
      download(o.url, input);
    }
    text = read_file(input, "text");
  } else {
    text = read_file(input, "text");
    make_folder(out);
  }
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
  const bpe_tokenizer tokenizer = bpe_tokenizer::load(o.vocab);
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
  bpe_tokenizer tokenizer = bpe_tokenizer::load(o.vocab);
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
  if (o.vocab.empty() == o.tokenizer_file.empty()) {
    throw error("decode needs exactly one of --vocab DIR and --tokenizer FILE");
  }
  if (!o.tokenizer_file.empty()) {
    const token_table table = token_table::read(o.tokenizer_file);
    write_stdout(table.decode(parse_ids(read_input(o.input), table.size())));
  } else {
    const bpe_tokenizer tokenizer = bpe_tokenizer::load(o.vocab);
    write_stdout(tokenizer.decode(parse_ids(read_input(o.input), tokenizer.vocab_size())));
  }
  return kOk;
}

int run(int argc, char** argv) {
  CLI::App app{"prepare_data: GPT-2 byte-level BPE tokenization and llm.c data files."};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 2 bad usage or input (missing or malformed files, failed download, unwritable output).\n"
      "Examples:\n"
      "  prepare_data tinyshakespeare --input ../shared/data/tinyshakespeare.txt --vocab ../shared/data/gpt2 "
      "--out data\n"
      "  echo 'Hello world' | prepare_data encode --vocab ../shared/data/gpt2\n"
      "  echo '15496 995' | prepare_data decode --tokenizer data/gpt2_tokenizer.bin");
  const std::string vocab_help = "folder holding encoder.json and vocab.bpe";
  options o;

  auto* shakespeare = app.add_subcommand(
      "tinyshakespeare",
      "write tiny_shakespeare_val.bin, tiny_shakespeare_train.bin (llm.c token files) and gpt2_tokenizer.bin");
  shakespeare->add_option("--input", o.input,
                          "the text (default: OUT/tinyshakespeare.txt, downloaded from --url unless it is there)");
  shakespeare->add_option("--vocab", o.vocab, vocab_help)->required();
  shakespeare->add_option("--out", o.out, "output folder (created if missing)")->required();
  shakespeare->add_option("--url", o.url, "where to download the text when --input is not given")
      ->capture_default_str();

  auto* tokenizer = app.add_subcommand("tokenizer", "write gpt2_tokenizer.bin (llm.c's tokenizer file) only");
  tokenizer->add_option("--vocab", o.vocab, vocab_help)->required();
  tokenizer->add_option("--out", o.out, "output folder (created if missing)")->required();

  auto* encode = app.add_subcommand("encode", "print the token ids of a text");
  encode->add_option("file", o.input, "the text (default or '-': standard input)");
  encode->add_option("--vocab", o.vocab, vocab_help)->required();

  auto* decode = app.add_subcommand("decode", "read token ids (white space or commas between them), print the text");
  decode->add_option("file", o.input, "the ids (default or '-': standard input)");
  decode->add_option("--vocab", o.vocab, vocab_help);
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
