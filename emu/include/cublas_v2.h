#pragma once
// The emulator's stand-in for cuBLAS (emu/cublas.h: SGEMM through OpenBLAS).
#include "emu/cublas.h"
