#pragma once
// The emulator's old path, kept for kernels/cuda/libraries.h, which includes it under
// WB_EMU. The emulator moved from kernels/emu/ to emu/, but libraries.h's text is part of
// the source hash of every variant that includes it (cmake/GenerateRegistry.cmake): the
// cuBLAS, cuBLASLt and cuDNN rungs and the matmuls of kernels/cuda/matmul.cuh, most of
// them verified on a device. Editing its include line would mark them all "changed since
// verified". When libraries.h is next edited for a reason of its own, point it at
// emu/cublas.h and delete this file. Only the emulated builds have emu/compat/ on their
// include path (WB_EMU_INCLUDE_DIRS, CMakeLists.txt).
#include "emu/cublas.h"
