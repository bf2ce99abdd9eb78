#pragma once
// The emulator's old path, kept for kernels/cuda/libraries.h, which includes it under
// WB_EMU: see emu/compat/kernels/emu/tensor_core.h for why the text of that header
// stays as it is. Point libraries.h at emu/cublas.h when it is next edited, and delete
// this file.
#include "emu/cublas.h"
