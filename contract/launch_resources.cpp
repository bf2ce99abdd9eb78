#include "contract/launch_resources.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>

namespace wb {

std::optional<LaunchLimits> launch_limits(int cc) {
  // Registers per block and threads per block are the same from sm_80 to sm_90; the
  // shared memory a block may opt into is not (CUDA C Programming Guide, compute
  // capabilities table): 163 KiB on sm_80, 99 KiB on sm_86 and sm_89, 227 KiB on sm_90.
  switch (cc) {
    case 80:
      return LaunchLimits{80, 65536, 1024, 163 * 1024};
    case 86:
    case 89:
      return LaunchLimits{cc, 65536, 1024, 99 * 1024};
    case 90:
      return LaunchLimits{90, 65536, 1024, 227 * 1024};
  }
  return std::nullopt;
}

int loaded_arch(int cc, const std::vector<int>& built) {
  int best = 0;
  for (int a : built)
    if (a / 10 == cc / 10 && a <= cc) best = std::max(best, a);
  return best;
}

std::vector<int> compiled_archs() {
  static const std::vector<int> archs = [] {  // the table is fixed at build time
    std::set<int> found;
    for (const CompiledKernel& k : compiled_kernels()) found.insert(k.arch);
    return std::vector<int>(found.begin(), found.end());
  }();
  return archs;
}

const CompiledKernel* find_compiled(const PlannedKernel& k, int arch) {
  const CompiledKernel* found = nullptr;
  for (const CompiledKernel& c : compiled_kernels()) {
    if (c.arch != arch || k.name != c.name) continue;
    const std::filesystem::path source(c.source);
    // A kernel of a named namespace (a header's, shared by two variants) is a global
    // symbol, with no file of its own (empty unit): any file that compiled it will do.
    if (!k.unit.empty() && source.stem().string() != k.unit) continue;
    if (source.parent_path().string() == k.folder) return &c;  // the launch's own folder
    if (!found) found = &c;
  }
  return found;
}

namespace {

// Registers a block of `threads` holds: allocated per warp, in units of 256.
int64_t block_registers(int registers_per_thread, int threads) {
  const int64_t per_warp = (int64_t(registers_per_thread) * 32 + 255) / 256 * 256;
  return per_warp * ((threads + 31) / 32);
}

}  // namespace

std::optional<std::string> launch_refusal(const std::vector<PlannedKernel>& launches, int cc,
                                          std::vector<std::string>* unknown) {
  const std::optional<LaunchLimits> limits = launch_limits(cc);
  if (!limits || !compiled_kernels_known()) return std::nullopt;
  const int arch = loaded_arch(cc, compiled_archs());
  if (arch == 0) return "this build has no code for sm_" + std::to_string(cc);
  const std::string where = " on sm_" + std::to_string(cc);
  for (const PlannedKernel& k : launches) {
    const CompiledKernel* c = find_compiled(k, arch);
    if (!c) {
      if (unknown) unknown->push_back(k.unit + ": " + k.name);
      continue;
    }
    const int64_t registers = block_registers(c->registers, k.threads);
    if (registers > limits->registers_per_block)
      return k.name + " needs " + std::to_string(c->registers) + " registers per thread: a block of " +
             std::to_string(k.threads) + " threads would hold " + std::to_string(registers) + " (limit " +
             std::to_string(limits->registers_per_block) + where + ")";
    const int64_t shared = int64_t(c->static_shared) + int64_t(k.dynamic_shared);
    if (c->static_shared > limits->max_static_shared || shared > limits->max_shared_per_block)
      return k.name + " needs " + std::to_string(shared / 1024) + " KiB of shared memory per block (limit " +
             std::to_string(limits->max_shared_per_block / 1024) + " KiB" + where + ")";
  }
  return std::nullopt;
}

std::optional<Occupancy> theoretical_occupancy(const CompiledKernel& c, int threads, std::size_t dynamic_shared,
                                               int cc) {
  // What one SM holds (CUDA C Programming Guide, compute capabilities table; the CUDA
  // occupancy calculator's allocation units): 64 warps and 32 blocks on sm_80 and
  // sm_90, 48 warps and 16 or 24 blocks on sm_86 and sm_89; a 64 Ki register file,
  // allocated per warp in units of 256; shared memory in units of 128 bytes, with
  // 1 KiB per block reserved by the system, at the largest carveout (164, 100 or 228 KiB).
  struct Sm {
    int cc, warps, blocks;
    int64_t shared;
  };
  static constexpr Sm kSms[] = {
      {80, 64, 32, 164 * 1024}, {86, 48, 16, 100 * 1024}, {89, 48, 24, 100 * 1024}, {90, 64, 32, 228 * 1024}};
  const auto known = std::find_if(std::begin(kSms), std::end(kSms), [cc](const Sm& sm) { return sm.cc == cc; });
  if (known == std::end(kSms)) return std::nullopt;
  const Sm& sm = *known;
  Occupancy o;
  o.compute_capability = cc;
  o.max_warps_per_sm = sm.warps;
  if (threads <= 0) return o;
  const int warps = (threads + 31) / 32;
  auto consider = [&](int64_t blocks, const char* why) {
    if (o.limit.empty() || blocks < o.blocks_per_sm) {
      o.blocks_per_sm = int(std::max<int64_t>(blocks, 0));
      o.limit = why;
    }
  };
  consider(sm.warps / warps, "warps");
  consider(sm.blocks, "blocks");
  const int64_t per_warp = (int64_t(c.registers) * 32 + 255) / 256 * 256;
  if (per_warp > 0) consider(65536 / per_warp / warps, "registers");
  const int64_t shared = (int64_t(c.static_shared) + int64_t(dynamic_shared) + 1024 + 127) / 128 * 128;
  consider(sm.shared / shared, "shared memory");
  o.warps_per_sm = o.blocks_per_sm * warps;
  return o;
}

}  // namespace wb
