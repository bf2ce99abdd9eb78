// tests/planted/planted_faults.cu compiled by the host compiler for the emulator, as
// the build does for every CUDA variant: the shim first.
// clang-format off
#include "emu/shim.h"
#include "tests/planted/planted_faults.cu"
// clang-format on
