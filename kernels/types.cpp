#include "kernels/types.h"

#include <string>

#include "kernels/errors.h"

namespace wb {

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::cpu:
      return "cpu";
    case Backend::cuda:
      return "cuda";
    case Backend::emu:
      return "emu";
  }
  return "?";
}

std::string_view to_string(NumericClass c) {
  switch (c) {
    case NumericClass::fp32:
      return "fp32";
    case NumericClass::tf32:
      return "tf32";
    case NumericClass::bf16:
      return "bf16";
  }
  return "?";
}

std::string_view to_string(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::i32:
      return "i32";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

std::string_view to_string(Role r) {
  switch (r) {
    case Role::input:
      return "input";
    case Role::output:
      return "output";
    case Role::inout:
      return "inout";
  }
  return "?";
}

Backend parse_backend(std::string_view s) {
  if (s == "cpu") return Backend::cpu;
  if (s == "cuda") return Backend::cuda;
  if (s == "emu") return Backend::emu;
  throw UsageError("unknown backend '" + std::string(s) + "' (legal: cpu, cuda, emu)");
}

NumericClass parse_numeric_class(std::string_view s) {
  if (s == "fp32") return NumericClass::fp32;
  if (s == "tf32") return NumericClass::tf32;
  if (s == "bf16") return NumericClass::bf16;
  throw UsageError("unknown numeric class '" + std::string(s) + "' (legal: fp32, tf32, bf16)");
}

}  // namespace wb
