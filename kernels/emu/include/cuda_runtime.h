#pragma once
// The emulator's stand-in for the CUDA header of this name (kernels/emu/shim.h).
#include "kernels/emu/shim.h"
