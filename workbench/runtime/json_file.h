#pragma once
// JSON text and files as wb reads them: one error for text that is not JSON, named
// after where it came from (the reports, best.json, device descriptions, wb predict's
// --counts and --predict-for's fitted constants).
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "base/errors.h"

namespace wb {

// The text's JSON; UsageError naming `origin` when it is not JSON.
inline nlohmann::json parse_json(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(origin + ": malformed JSON: " + e.what());
  }
}

// The file's JSON; UsageError when it cannot be read or is not JSON.
inline nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), path);
}

}  // namespace wb
