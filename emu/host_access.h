#pragma once
// What a host-side stand-in for a kernel needs from the emulated device: how far a
// device pointer's allocation reaches. The Triton interpreter's client
// (device/triton/interpreter.cpp) copies each tensor of a rung's arguments out of the
// emulated device memory and back by this extent, since the op's argument struct
// carries pointers, not sizes.
#include <cstddef>

namespace wb::emu {

// The bytes from p to the end of the live device allocation that holds it; 0 when p
// lies in none (a null pointer, host memory, a freed buffer).
std::size_t device_bytes_from(const void* p);

}  // namespace wb::emu
