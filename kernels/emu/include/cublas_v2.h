#pragma once
// The emulator's stand-in for cuBLAS (kernels/emu/cublas.h: SGEMM through OpenBLAS).
#include "kernels/emu/cublas.h"
