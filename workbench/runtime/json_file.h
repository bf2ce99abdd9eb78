#pragma once
// A JSON file read whole: what wb predict's --counts and --predict-for's fitted
// constants read (the reports, best.json and device descriptions parse their own text
// through their parse_* functions, which name the same errors).
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/errors.h"

namespace wb {

// The file's JSON; UsageError when it cannot be read or is not JSON.
inline nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": malformed JSON: " + e.what());
  }
}

}  // namespace wb
