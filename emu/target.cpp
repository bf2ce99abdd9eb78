// The GPUs the emulator stands for (emu/emu.h: Target): the launch limits and the
// shared memory of each, by compute capability, chosen by WB_EMU_TARGET or
// set_target (sm_90 by default).
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "emu/emu.h"

namespace wb::emu {
namespace {

Target make_target(const std::string& name) {
  Target t;
  t.name = name;
  if (name == "sm_90") {
    t.major = 9, t.minor = 0, t.multiprocessors = 132;
    t.max_shared_per_block_optin = 227 * 1024, t.shared_per_multiprocessor = 228 * 1024;
    t.max_threads_per_multiprocessor = 2048, t.max_blocks_per_multiprocessor = 32;
  } else if (name == "sm_80") {
    t.major = 8, t.minor = 0, t.multiprocessors = 108;
    t.max_shared_per_block_optin = 163 * 1024, t.shared_per_multiprocessor = 164 * 1024;
    t.max_threads_per_multiprocessor = 2048, t.max_blocks_per_multiprocessor = 32;
  } else if (name == "sm_86" || name == "sm_89") {
    t.major = 8, t.minor = name == "sm_86" ? 6 : 9, t.multiprocessors = name == "sm_86" ? 84 : 128;
    t.max_shared_per_block_optin = 99 * 1024, t.shared_per_multiprocessor = 100 * 1024;
    t.max_threads_per_multiprocessor = 1536, t.max_blocks_per_multiprocessor = name == "sm_86" ? 16 : 24;
  } else {
    std::string known;
    for (const auto& n : target_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown emulation target '" + name + "' (known: " + known + ")");
  }
  t.device_name = "emulated sm_" + std::to_string(t.major) + std::to_string(t.minor) + " (" +
                  std::to_string(t.multiprocessors) + " SMs)";
  return t;
}

Target& current_target() {
  static Target t = [] {
    const char* env = std::getenv("WB_EMU_TARGET");
    return make_target(env && *env ? env : "sm_90");
  }();
  return t;
}

}  // namespace

const Target& target() { return current_target(); }

void set_target(std::string_view name) { current_target() = make_target(std::string(name)); }

std::vector<std::string> target_names() { return {"sm_80", "sm_86", "sm_89", "sm_90"}; }

}  // namespace wb::emu
