#pragma once
// Whether a GPU could launch a CUDA variant's configuration at a shape, known without a
// GPU: the emulated twin of the variant (same source, compiled for the emulator) runs
// its host code with placeholder pointers under an emulator LaunchPlan, which lists the
// kernels it would launch, their block sizes and dynamic shared memory; the table of
// compiled kernels (contract/launch_resources.h) has what ptxas gave each of them.
#include <optional>
#include <string>
#include <vector>

#include "contract/launch_resources.h"
#include "contract/registry.h"

namespace wb {

// The kernels v (a CUDA or emu variant) launches for this shape and configuration, or
// nullopt when that cannot be planned (a variant the emulator cannot run, one that
// throws for the shape); `why` then says so.
std::optional<std::vector<PlannedKernel>> plan_launches(const Registry& reg, const Variant& v, const Shape& shape,
                                                        const ParamValues& params, std::string* why = nullptr);

// "/src/variants/x/common.cuh" -> "variants/x": the folder of a launch's source file,
// relative to the source tree, as PlannedKernel::folder holds it.
std::string source_folder(const std::string& file);

// Why a device of compute capability cc (86 for 8.6) cannot launch this configuration:
// a kernel needs more registers or shared memory than a block of its size may have.
// nullopt when it can, or when nothing is known (no table, no plan).
std::optional<std::string> cannot_launch(const Registry& reg, const Variant& v, const Shape& shape,
                                         const ParamValues& params, int cc);

}  // namespace wb
