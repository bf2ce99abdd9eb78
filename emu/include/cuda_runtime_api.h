#pragma once
// The emulator's stand-in for the CUDA header of this name (emu/shim.h).
#include "emu/shim.h"
