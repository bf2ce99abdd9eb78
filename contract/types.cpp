#include "contract/types.h"

#include "base/enum_names.h"

namespace wb {
namespace {

constexpr EnumNames<Backend, 3> kBackends = {{Backend::cpu, "cpu"}, {Backend::cuda, "cuda"}, {Backend::emu, "emu"}};
constexpr EnumNames<NumericClass, 3> kNumericClasses = {
    {NumericClass::fp32, "fp32"}, {NumericClass::tf32, "tf32"}, {NumericClass::bf16, "bf16"}};
constexpr EnumNames<DType, 3> kDTypes = {{DType::f32, "f32"}, {DType::i32, "i32"}, {DType::bf16, "bf16"}};
constexpr EnumNames<Role, 3> kRoles = {{Role::input, "input"}, {Role::output, "output"}, {Role::inout, "inout"}};

}  // namespace

std::string_view to_string(Backend b) { return name_in(kBackends, b); }
std::string_view to_string(NumericClass c) { return name_in(kNumericClasses, c); }
std::string_view to_string(DType t) { return name_in(kDTypes, t); }
std::string_view to_string(Role r) { return name_in(kRoles, r); }

Backend parse_backend(std::string_view s) { return parse_name(kBackends, s, "backend"); }
NumericClass parse_numeric_class(std::string_view s) { return parse_name(kNumericClasses, s, "numeric class"); }

}  // namespace wb
