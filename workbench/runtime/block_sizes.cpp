#include "workbench/runtime/block_sizes.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "base/errors.h"

namespace wb {
namespace {

const TuningParam* block_size_axis(const Variant& v) {
  const auto bs =
      std::find_if(v.params.begin(), v.params.end(), [](const TuningParam& p) { return p.name == "block_size"; });
  return bs == v.params.end() ? nullptr : &*bs;
}

}  // namespace

std::vector<ParamValues> configurations_at(const Variant& v, const std::optional<std::vector<int>>& sizes,
                                           bool defaults) {
  std::vector<ParamValues> all = v.all_params();
  if (defaults) {  // the other axes at their defaults: block_size is the one left to vary
    const ParamValues d = v.default_params();
    const auto other_than_default = [&d](const ParamValues& p) {
      for (const auto& [name, value] : p.items())
        if (name != "block_size" && value != d.get(name)) return true;
      return false;
    };
    all.erase(std::remove_if(all.begin(), all.end(), other_than_default), all.end());
  }
  if (!sizes || !block_size_axis(v)) return all;
  const auto at = [&all](const std::vector<int>& listed) {
    std::vector<ParamValues> chosen;
    for (const ParamValues& p : all)
      if (std::find(listed.begin(), listed.end(), p.get("block_size")) != listed.end()) chosen.push_back(p);
    return chosen;
  };
  std::vector<ParamValues> chosen = at(*sizes);
  return chosen.empty() ? at({v.default_params().get("block_size")}) : chosen;
}

void check_block_sizes(const std::vector<int>& sizes, const std::vector<const Variant*>& selected) {
  std::set<int> legal;
  for (const Variant* v : selected)
    if (const TuningParam* bs = block_size_axis(*v)) legal.insert(bs->values.begin(), bs->values.end());
  if (legal.empty()) throw UsageError("--block-sizes does not apply: no selected variant takes a block size");
  for (int s : sizes) {
    if (legal.count(s)) continue;
    throw UsageError("block size " + std::to_string(s) + " is not legal for any selected variant (legal: " +
                     describe_values({legal.begin(), legal.end()}) + ")");
  }
}

}  // namespace wb
