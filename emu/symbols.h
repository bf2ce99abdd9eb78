#pragma once
// The names of emulated kernels, as the table of compiled kernels holds them
// (contract/launch_resources.h): a kernel compiled for the emulator is a host function,
// and the program's own symbol table (.symtab of /proc/self/exe, with the file
// symbols that precede each translation unit's local symbols) names it and its file.
#include <optional>
#include <string>
#include <vector>

namespace wb::emu {

struct KernelSymbol {
  std::string name;  // "variants::layernorm_vec4_registers<8>": demangled, reduced
  std::string unit;  // the defining file's stem: "06_vec4_registers"
};

// The kernel at this address, or nullopt when the program has no symbol table (a
// stripped binary) or none covers it.
std::optional<KernelSymbol> kernel_symbol(const void* kernel);

// Whether the program has a symbol table at all (`strip` removes it; `strip --strip-debug`
// keeps it). Without one no kernel can be named, so the launch limits of the table of
// compiled kernels cannot be checked before a launch (workbench/runtime/launch_check.h).
bool have_symbol_table();

// Where an instruction of the program is: its function ("variants::flag_spin") and,
// where the build has line tables and addr2line is installed, its source line
// ("variants::flag_spin at tests/emu/controls.h:120"). `pc` is a return address (the
// instruction after a call).
std::string code_location(const void* pc);

// The source lines of the instruction before the return address `pc`, innermost first:
// its own line, then the lines of the functions it is inlined into, up to the kernel
// ("device/cuda/device_utils.cuh:41", "variants/op/NN_name.cu:76"), without the
// emulator's own lines; empty where code_location has no line. Cached per address.
std::vector<std::string> source_lines(const void* pc);

// Where an access was made, for a fault's message: its source lines from the innermost
// out ("device/cuda/device_utils.cuh:56, inlined in variants/op/NN_name.cu:40"), so
// that an access inside a helper still names the user's line; code_location where the
// build has no line tables.
std::string access_site(const void* pc);

// A demangled name reduced as cmake/launch_resources.py reduces nvcc's: no return type,
// no parameter list, no "wb::", "emu_build::" or anonymous namespaces.
std::string reduced_kernel_name(const std::string& demangled);

}  // namespace wb::emu
