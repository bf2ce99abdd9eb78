#pragma once
// Where the main job's data comes from: TinyShakespeare and GPT-2's vocabulary
// (encoder.json, vocab.bpe), each pinned to its public source and its SHA-256, so that
// a clone with nothing beside it can fetch them, and a copy found on disk or downloaded
// is the very file the tokenizer and its tests were checked on.
//
// A file not given explicitly (prepare_data's --input, --vocab) is looked up, in order:
//   1. $WB_DATA, a folder laid out as a data folder (tinyshakespeare.txt, gpt2/...);
//   2. the build's data cache (CMake's WB_DATA_DIR, by default ../shared/data beside
//      the repository), only where it exists: an offline copy, never a requirement;
//   3. the download folder (prepare_data's --out, laid out as a data folder), where an
//      earlier run downloaded it;
//   4. a download from its source into the download folder.
// Every file found in 1-3 or downloaded must have its pinned SHA-256 (a mismatch is an
// error naming the file and both checksums); a download goes to a temporary file that
// is checked, then renamed into place, or removed.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tokenizer/common.h"

namespace wb::tokenizer {

// One pinned file (data_files.cpp says where each checksum comes from).
struct data_file {
  std::string name;      // "encoder.json": as the user names it (--sha256 NAME=HEX)
  std::string relative;  // "gpt2/encoder.json": its place in a data folder
  std::string url;       // its public source
  std::string sha256;    // lowercase hexadecimal
};

constexpr const char* kGpt2VocabUrl = "https://openaipublic.blob.core.windows.net/gpt-2/models/124M";

data_file tinyshakespeare_file();  // tinyshakespeare.txt (dataset.h's kTinyShakespeareUrl)
data_file encoder_json_file();     // gpt2/encoder.json from kGpt2VocabUrl
data_file vocab_bpe_file();        // gpt2/vocab.bpe from kGpt2VocabUrl
// The three, in the order a message lists them.
std::vector<data_file> pinned_files();

struct data_lookup {
  std::optional<std::filesystem::path> wb_data;  // $WB_DATA (unset or empty: none)
  std::filesystem::path cache;                   // the build's cache folder; empty: none
  std::filesystem::path download;                // where downloads go; empty: never download
  // An explicit source URL (a mirror, a test's server): download from it rather than
  // look in WB_DATA and the cache; a verified earlier download is still used.
  bool url_given = false;
  std::ostream* log = nullptr;  // where each file came from; nullptr: silent
  // Appended to the message of a file that cannot be found or downloaded: how to
  // provide the files offline.
  std::string offline_hint;
};

// $WB_DATA, or nothing when it is unset or empty; throws error when it names no folder.
std::optional<std::filesystem::path> wb_data_from_environment();

// The path of the file, found or downloaded as described above; throws error when it
// cannot be found, downloaded or verified.
std::filesystem::path find_data_file(const data_file& file, const data_lookup& lookup);

// Downloads url to path with curl (no shell in between): into a temporary file beside
// path, checked against sha256 (when not empty), then renamed to path. Throws error on
// any failure, leaving nothing at path or beside it.
void download_file(const std::string& url, const std::filesystem::path& path, const std::string& sha256,
                   std::ostream* log);

// Throws error when bytes do not have the SHA-256 `expected`: "WHAT does not have the
// expected SHA-256: expected E, got A".
void verify_sha256(const std::string& bytes, const std::string& expected, const std::string& what);

}  // namespace wb::tokenizer
