#pragma once
// Small vocabulary types shared by ops, variants, the workbench and the trainer.
#include <cstddef>
#include <string>
#include <string_view>

namespace wb {

// cpu: host code. cuda: a GPU. emu: the CUDA variants compiled by the host compiler and
// run by the SIMT emulator (kernels/emu/), which proves logic, never speed.
enum class Backend { cpu, cuda, emu };

// Which tolerance a variant is held to and which trainer precision may use it:
// fp32 (plain float math), tf32 (tensor cores on fp32 data), bf16 (bf16 copies).
enum class NumericClass { fp32, tf32, bf16 };

// Element types of tensors. bf16 is a storage type (base/bf16.h): variants compute
// in fp32 and round to it.
enum class DType { f32, i32, bf16 };

// How a tensor takes part in an op: read only, written (poisoned before each run so
// every element must be written), or read and written (accumulated gradients and
// in-place updates: they start from random values, never zeros).
enum class Role { input, output, inout };

std::string_view to_string(Backend b);
std::string_view to_string(NumericClass c);
std::string_view to_string(DType t);
std::string_view to_string(Role r);

// Parsers throw wb::UsageError naming the legal values.
Backend parse_backend(std::string_view s);
NumericClass parse_numeric_class(std::string_view s);

constexpr std::size_t dtype_size(DType t) { return t == DType::bf16 ? 2 : 4; }

}  // namespace wb
