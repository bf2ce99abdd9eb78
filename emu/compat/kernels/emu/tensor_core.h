#pragma once
// The emulator's old path, kept for kernels/cuda/'s header of the tensor-core
// instructions, which includes it under WB_EMU. The emulator moved from kernels/emu/ to
// emu/, but that header's text is part of the source hash of every variant that
// includes it (cmake/GenerateRegistry.cmake), so editing its include line would mark
// those variants "changed since verified" on the devices that verified them. This
// forwarder lets the text stay as it is; when that header is next edited for a reason
// of its own, point it at emu/tensor_core_instructions.h and delete this file. Only the
// emulated builds have emu/compat/ on their include path (WB_EMU_INCLUDE_DIRS,
// CMakeLists.txt).
#include "emu/tensor_core_instructions.h"
