#pragma once
// Launch limits known at build time. ptxas reports, for every CUDA kernel it compiles
// and every target architecture, the registers per thread and the static shared memory
// the kernel needs (cmake/ptxas_resources.sh keeps that, cmake/launch_resources.py
// turns it into the table below). With the launches a configuration makes (which
// kernels, how many threads, how much dynamic shared memory: the emulator plans them,
// emu/emu.h LaunchPlan), launch_refusal says whether a device of a compute
// capability could launch them, without a device.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace wb {

struct CompiledKernel {
  const char* source;  // "variants/layernorm_forward/06_vec4_registers.cu"
  const char* name;    // "variants::layernorm_vec4_registers<8>" (emu/symbols.h)
  int arch;            // 80 for sm_80
  int registers;       // per thread
  int static_shared;   // bytes per block
  int stack;           // bytes per thread
  int spill_stores;    // bytes per thread (spills are legal, but slow)
};

// The table of this build (generated); empty, and compiled_kernels_known() false, in a
// build without nvcc.
const std::vector<CompiledKernel>& compiled_kernels();
bool compiled_kernels_known();

// The limits of one compute capability that decide whether a block can launch.
struct LaunchLimits {
  int compute_capability;     // 86 for 8.6
  int registers_per_block;    // 65536 on sm_80..sm_90
  int max_threads_per_block;  // 1024
  int max_shared_per_block;   // bytes, static + dynamic, with the opt-in
  int max_static_shared = 48 * 1024;
};
// sm_80, sm_86, sm_89 and sm_90 (nullopt for another).
std::optional<LaunchLimits> launch_limits(int compute_capability);

// The cubin a device of this compute capability loads from a build for `built`
// architectures: the newest one of the same major version not above it (0: none).
int loaded_arch(int compute_capability, const std::vector<int>& built);
// The architectures this build compiled for (from the table).
std::vector<int> compiled_archs();

// One launch a configuration makes: the kernel's name as the table holds it, the stem
// of the file that defines it ("06_vec4_registers"; empty for a kernel of a named
// namespace, which any file including its header instantiates) and the folder of the
// launch's source line ("variants/layernorm_forward"; it tells apart files of the same
// stem), threads per block, dynamic shared memory.
struct PlannedKernel {
  std::string name;
  std::string unit;
  std::string folder;
  int threads = 0;
  std::size_t dynamic_shared = 0;
};
// The table's entry for a planned kernel at an architecture, or nullptr.
const CompiledKernel* find_compiled(const PlannedKernel& k, int arch);

// Why a device of this compute capability cannot launch these kernels (too many
// registers for the block, too much shared memory), or nullopt when it can or when
// the table does not know (a build without nvcc). `unknown`, when given, receives the
// kernels the table lacks.
std::optional<std::string> launch_refusal(const std::vector<PlannedKernel>& launches, int compute_capability,
                                          std::vector<std::string>* unknown = nullptr);

// Theoretical occupancy, as Nsight Compute's launch statistics give it: how many blocks
// of a kernel one SM holds at once (limited by its warps, its block slots, its register
// file and its shared memory), and the warps they bring against the SM's most.
struct Occupancy {
  int compute_capability = 0;
  int blocks_per_sm = 0;  // 0: a block does not fit at all
  int warps_per_sm = 0;
  int max_warps_per_sm = 0;
  std::string limit;  // what stops one more block: "warps", "blocks", "registers", "shared memory"
  double fraction() const { return max_warps_per_sm ? double(warps_per_sm) / max_warps_per_sm : 0.0; }
};
// For the compiled kernel `c`, blocks of `threads` with `dynamic_shared` bytes, on sm_80,
// sm_86, sm_89 or sm_90 (nullopt for another).
std::optional<Occupancy> theoretical_occupancy(const CompiledKernel& c, int threads, std::size_t dynamic_shared,
                                               int compute_capability);

}  // namespace wb
