// Prints wb's bf16 conversions of float bit patterns, for tests/python/test_bf16.py to
// hold against PyTorch: for each hexadecimal float bit pattern on standard input, a
// line "<bits> <host rn> <host rz> <host rd> <host ru> <emu rn> <emu rz> <emu rd> <emu ru>"
// (base/bf16.h on the host, then the emulator's CUDA intrinsics of
// emu/include/cuda_bf16.h), each a hexadecimal bf16 bit pattern.
#include <cuda_bf16.h>  // the emulator's: this file is compiled for the emulator

#include <cinttypes>
#include <cstdio>

#include "base/bf16.h"

int main() {
  unsigned long long in = 0;
  while (std::scanf("%llx", &in) == 1) {
    const float f = wb::float_from_bits(uint32_t(in));
    std::printf("%08" PRIx32 " %04x %04x %04x %04x %04x %04x %04x %04x\n", uint32_t(in), wb::to_bf16(f).bits,
                wb::to_bf16_rz(f).bits, wb::to_bf16_rd(f).bits, wb::to_bf16_ru(f).bits,
                wb::__bfloat16_as_ushort(wb::__float2bfloat16(f)), wb::__bfloat16_as_ushort(wb::__float2bfloat16_rz(f)),
                wb::__bfloat16_as_ushort(wb::__float2bfloat16_rd(f)), wb::__bfloat16_as_ushort(wb::__float2bfloat16_ru(f)));
  }
  return 0;
}
