#include "workbench/runtime/can_run.h"

#include "workbench/runtime/best.h"
#include "workbench/runtime/launch_check.h"

namespace wb {

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
