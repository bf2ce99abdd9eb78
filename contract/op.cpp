#include "contract/op.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/bf16.h"

#include "base/checked.h"
#include "base/errors.h"
#include "contract/variant.h"

namespace wb {

ToleranceFn tolerance(Tolerance fp32, Tolerance tf32, Tolerance bf16) {
  return [=](NumericClass c, const Shape&) {
    switch (c) {
      case NumericClass::fp32:
        return fp32;
      case NumericClass::tf32:
        return tf32;
      case NumericClass::bf16:
        return bf16;
    }
    return fp32;
  };
}

std::string Extent::text() const {
  if (dim.empty()) return std::to_string(factor);
  return (factor == 1 ? "" : std::to_string(factor)) + dim;
}

namespace {

// "B,T,3C" -> {B}, {T}, {3, C}
std::vector<Extent> parse_extents(std::string_view text) {
  std::vector<Extent> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    Extent e;
    size_t digits = 0;
    while (digits < item.size() && std::isdigit(static_cast<unsigned char>(item[digits]))) ++digits;
    if (digits > 0) e.factor = std::stoll(std::string(item.substr(0, digits)));
    e.dim = std::string(item.substr(digits));
    if (!e.dim.empty()) Shape{}.get(e.dim);  // throws on a misspelt dim
    out.push_back(e);
  }
  return out;
}

// "tensor 'out' (B, T, C) at B=4 T=1024 C=768": the dims a size error comes from.
std::string tensor_at(const TensorSpec& t, const Shape& s) {
  std::string dims;
  for (const auto& e : t.extents)
    if (!e.dim.empty() && dims.find(e.dim + "=") == std::string::npos)
      dims += (dims.empty() ? "" : " ") + e.dim + "=" + std::to_string(s.get(e.dim));
  return "tensor '" + t.name + "' " + t.extents_text() + (dims.empty() ? "" : " at " + dims);
}

// The builders' common part: an fp32 tensor of that name, role and extents.
TensorSpec tensor(std::string name, Role role, std::string_view extents) {
  TensorSpec t;
  t.name = std::move(name);
  t.role = role;
  t.extents = parse_extents(extents);
  return t;
}

}  // namespace

std::vector<int64_t> TensorSpec::dims(const Shape& s) const {
  std::vector<int64_t> out;
  for (const auto& e : extents) {
    const CheckedInt d = CheckedInt(e.factor) * (e.dim.empty() ? 1 : s.get(e.dim));
    if (!d.ok()) throw UsageError(tensor_at(*this, s) + ": the extent " + e.text() + " does not fit in 64 bits");
    out.push_back(d.value());
  }
  return out;
}

// The byte count must fit too: bytes() multiplies by the element size.
int64_t TensorSpec::numel(const Shape& s) const {
  CheckedInt n = 1;
  for (int64_t d : dims(s)) n *= d;
  if (!n.ok() || !(n * int64_t(dtype_size(dtype))).ok())
    throw UsageError(tensor_at(*this, s) + " has more elements than 64-bit sizes can count");
  return n.value();
}

std::string TensorSpec::extents_text() const {
  std::string out;
  for (const auto& e : extents) out += (out.empty() ? "" : ", ") + e.text();
  return "(" + out + ")";
}

TensorSpec input(std::string name, std::string_view extents, Init init) {
  TensorSpec t = tensor(std::move(name), Role::input, extents);
  t.init = std::move(init);
  return t;
}

TensorSpec token_input(std::string name, std::string_view extents, std::string upper_dim) {
  TensorSpec t = input(std::move(name), extents, Init::integers_below(std::move(upper_dim)));
  t.dtype = DType::i32;
  return t;
}

TensorSpec output(std::string name, std::string_view extents, ToleranceFn tol) {
  TensorSpec t = tensor(std::move(name), Role::output, extents);
  t.tol = std::move(tol);
  return t;
}

TensorSpec inout(std::string name, std::string_view extents, ToleranceFn tol, Init init) {
  TensorSpec t = output(std::move(name), extents, std::move(tol));
  t.role = Role::inout;
  t.init = std::move(init);
  return t;
}

TensorSpec optional(TensorSpec t) {
  t.optional = true;
  return t;
}

TensorSpec as_bf16(TensorSpec t) {
  if (t.dtype != DType::f32) throw std::logic_error("as_bf16(" + t.name + "): only an fp32 tensor can be stored in bf16");
  t.dtype = DType::bf16;
  return t;
}

double bf16_ulp(double x) {
  int e = 0;
  const double m = std::frexp(std::fabs(x), &e);  // |x| = m * 2^e, m in [0.5, 1)
  if (m == 0) return std::ldexp(1.0, -133);
  return std::ldexp(1.0, std::max(e - 1, -126) - 7);
}

TensorTable::TensorTable(const OpSpec& op, const Shape& shape, std::vector<void*> data)
    : op_(&op), shape_(shape), data_(std::move(data)) {
  if (data_.size() != op.tensors.size())
    throw std::logic_error("tensor table for " + op.name + " has " + std::to_string(data_.size()) +
                           " pointers, the op has " + std::to_string(op.tensors.size()) + " tensors");
}

void* TensorTable::find(std::string_view name, DType dtype) const {
  auto index = op_->tensor_index(name);
  if (!index) throw std::logic_error(op_->name + " has no tensor '" + std::string(name) + "'");
  if (op_->tensors[*index].dtype != dtype)
    throw std::logic_error(op_->name + " tensor '" + std::string(name) + "' is not " + std::string(to_string(dtype)));
  return data_[*index];
}

float* TensorTable::f32(std::string_view name) const { return static_cast<float*>(find(name, DType::f32)); }

bf16* TensorTable::bfloat16(std::string_view name) const { return static_cast<bf16*>(find(name, DType::bf16)); }

int32_t* TensorTable::i32(std::string_view name) const { return static_cast<int32_t*>(find(name, DType::i32)); }

double TensorTable::scalar(std::string_view name) const { return op_->scalar(name).value(shape_); }

OpSpec::OpSpec(std::string name_, std::string summary_) : name(std::move(name_)), summary(std::move(summary_)) {}

void OpSpec::invoke(const Variant& v, const TensorTable& t, const Launch& launch) const {
  if (v.args_type != args_type_) throw std::logic_error(v.key() + " does not take the argument struct of " + name);
  make_and_run_([&](const void* args) { v.run(args, launch); }, t);
}

std::optional<std::size_t> OpSpec::tensor_index(std::string_view tensor_name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == tensor_name) return i;
  return std::nullopt;
}

const TensorSpec& OpSpec::tensor(std::string_view tensor_name) const {
  if (auto i = tensor_index(tensor_name)) return tensors[*i];
  throw std::out_of_range(name + " has no tensor '" + std::string(tensor_name) + "'");
}

const ScalarSpec& OpSpec::scalar(std::string_view scalar_name) const {
  for (const auto& s : scalars)
    if (s.name == scalar_name) return s;
  throw std::out_of_range(name + " has no scalar '" + std::string(scalar_name) + "'");
}

std::string OpSpec::storage() const {
  for (const auto& t : tensors)
    if (t.dtype == DType::bf16) return "bf16";
  return "fp32";
}

double OpSpec::bytes(const Shape& s) const {
  if (min_bytes) return min_bytes(s);
  double total = 0;
  for (const auto& t : tensors) total += static_cast<double>(t.bytes(s)) * (t.role == Role::inout ? 2 : 1);
  return total;
}

void OpSpec::check_shape(const Shape& s) const {
  for (const auto& d : dims)
    if (s.get(d) <= 0) throw UsageError(name + ": shape dim " + d + " must be positive");
  // Every size is computed once here, before anything is allocated: a shape whose
  // counts do not fit in 64 bits is refused, never wrapped.
  CheckedInt total = 0;
  try {
    for (const auto& t : tensors) total += CheckedInt(t.numel(s)) * int64_t(dtype_size(t.dtype));
  } catch (const UsageError& e) {
    throw UsageError(name + ": " + e.what());
  }
  if (!total.ok())
    throw UsageError(name + " cannot take the shape " + describe_shape(s) +
                     ": its tensors hold more bytes than 64-bit sizes can count");
  if (shape_error) {
    if (auto why = shape_error(s)) throw UsageError(name + " cannot take the shape " + describe_shape(s) + ": " + *why);
  }
}

}  // namespace wb
