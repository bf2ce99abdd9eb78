#pragma once
// The one answer to "can this variant run here, and if not, why": a variant, a
// configuration of its launch parameters and a shape, on a device, under what the
// caller allows. The harness reports a refusal as a skipped configuration (not
// emulated, when the emulator lacks what the variant needs); the kernel plan falls
// back to the op's default for that call. Both print the same reason.
//
// The checks, in order (a new one lands here, nowhere else):
//   1. the device: the emulator cannot run what needs cuDNN, cuBLASLt or tensor
//      cores; a GPU below the variant's compute capability;
//   2. what the caller allows: a numeric class wider than its precision, a variant
//      whose float atomics make it non-deterministic when it asks for bitwise
//      repeatable ones;
//   3. the shape: the variant's requirements and launch limit (Variant::skip_reason);
//   4. the launch: registers or shared memory that ptxas gave the kernels of this
//      configuration beyond what a block may have on the device (launch_check.h).
// What only the launch itself finds out is the variant's wb::Unsupported
// (base/errors.h), caught where the variant runs. The launch parameters are the
// caller's to check against the variant's legal values (Variant::check_params; the
// kernel plan's best.json entries may come from a machine with more cores).
#include <optional>
#include <string>
#include <vector>

#include "contract/registry.h"
#include "workbench/runtime/executor.h"

namespace wb {

// What a caller allows. The defaults allow everything (wb check and sweep run every
// variant); the trainer narrows them.
struct RunFilter {
  NumericClass precision = NumericClass::bf16;  // the widest numeric class allowed
  bool deterministic = false;                   // only variants that claim bitwise repeatable outputs
};

struct Refusal {
  enum class Kind { device, filter, shape, launch };
  Kind kind;
  std::string reason;  // "not emulated: needs cuDNN", "cannot launch: ...", "needs C % 4 == 0"
  // The record status of a refused configuration on this backend: not_emulated for
  // what the emulator lacks, skipped otherwise.
  bool not_emulated(Backend backend) const { return kind == Kind::device && backend == Backend::emu; }
};

// Why v cannot run `shape` with `params` (complete: every parameter of v) on `device`
// under `filter`, or nullopt when nothing known before the launch stops it.
std::optional<Refusal> why_cannot_run(const Registry& registry, const Variant& v, const Shape& shape,
                                      const ParamValues& params, const DeviceInfo& device,
                                      const RunFilter& filter = {});

}  // namespace wb
