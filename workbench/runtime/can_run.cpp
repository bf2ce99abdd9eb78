#include "workbench/runtime/can_run.h"

#include <algorithm>

#include "workbench/runtime/best.h"
#include "workbench/runtime/launch_check.h"

namespace wb {

std::vector<ParamValues> check_configurations(const Variant& v, const std::optional<std::vector<int>>& block_sizes) {
  std::vector<ParamValues> all = v.all_params();
  if (!block_sizes) return all;
  std::vector<ParamValues> chosen;
  for (const ParamValues& p : all) {
    const auto bs = p.find("block_size");
    if (bs && std::find(block_sizes->begin(), block_sizes->end(), *bs) != block_sizes->end()) chosen.push_back(p);
  }
  if (chosen.empty()) chosen.push_back(v.default_params());
  return chosen;
}

std::optional<Refusal> why_cannot_run(const Registry& registry, const Variant& v, const Shape& shape,
                                      const ParamValues& params, const DeviceInfo& device, const RunFilter& filter) {
  using Kind = Refusal::Kind;
  if (auto why = cannot_run_on(v, device)) return Refusal{Kind::device, *why};
  if (filter.deterministic && !v.claims_deterministic(params))
    return Refusal{Kind::filter, "not deterministic (its float atomics add in a varying order)"};
  if (!allowed_in(v.numeric, filter.precision))
    return Refusal{Kind::filter, "of class " + std::string(to_string(v.numeric)) + ", not allowed at precision " +
                                     std::string(to_string(filter.precision))};
  if (auto why = v.skip_reason(shape, params)) return Refusal{Kind::shape, *why};
  if (auto why = cannot_launch(registry, v, shape, params, compute_capability_number(device.compute_capability)))
    return Refusal{Kind::launch, "cannot launch: " + *why};
  return std::nullopt;
}

}  // namespace wb
