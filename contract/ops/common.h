#pragma once
// Shared pieces of the op catalogue's definitions (contract/ops/*.cpp): tolerance
// shapes, argument helpers and the bf16 twin of an fp32 op.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/bf16.h"
#include "base/checked.h"
#include "contract/op.h"

namespace wb::ops {

// Results of a few float operations each: held to atol + rtol*|ref| in fp32, and to
// the looser floors of tf32 (1e-3) and bf16 (2e-2).
inline ToleranceFn elementwise(double atol = 1e-5, double rtol = 1e-5) {
  return tolerance({atol, rtol}, {std::max(atol, 1e-3), std::max(rtol, 1e-3)},
                   {std::max(atol, 2e-2), std::max(rtol, 2e-2)});
}

// A bf16 output of fp32 arithmetic, rounded once to nearest even: the fp32 op's
// tolerance plus half an ulp of bf16 at the reference.
inline ToleranceFn rounded_to_bf16(ToleranceFn fp32) {
  return [fp32](NumericClass c, const Shape& s) {
    Tolerance t = fp32(c, s);
    t.ulps += 0.5;
    return t;
  };
}

// Results that sum K = length(shape) terms of magnitude about one: the absolute error
// of a float sum grows like sqrt(K) (random rounding), more so with tf32 or bf16
// inputs (10 and 7 bits of mantissa).
inline ToleranceFn summed(std::function<double(const Shape&)> length) {
  return [length](NumericClass c, const Shape& s) {
    const double root = std::sqrt(std::max(1.0, length(s)));
    switch (c) {
      case NumericClass::fp32:
        return Tolerance{2e-5 * root, 1e-5};
      case NumericClass::tf32:
        return Tolerance{4e-3 * root, 1e-3};
      case NumericClass::bf16:
        return Tolerance{1.5e-2 * root, 1e-2};
    }
    return Tolerance{2e-5 * root, 1e-5};
  };
}

// Summed over one shape dim, or over the B*T rows.
inline ToleranceFn summed_over(std::string dim) {
  return summed([dim](const Shape& s) { return double(s.get(dim)); });
}
inline ToleranceFn summed_over_rows() {
  return summed([](const Shape& s) { return double(s.B * s.T); });
}

inline int as_int(int64_t v) { return static_cast<int>(v); }

using ShapeCheck = std::function<std::optional<std::string>(const Shape&)>;

// Most argument structs hold the dims as int (as_int above), and their kernels count
// rows (B*T) and heads (B*NH) in int; element offsets are 64-bit. A shape where one of
// `terms` -- a dim, or a product such as "B*T" or "3*C" -- exceeds 2^31-1 would be
// truncated on the way in, so no variant (the reference included) can take it.
inline ShapeCheck int32_limits(std::vector<std::string> terms) {
  return [terms](const Shape& s) -> std::optional<std::string> {
    for (const auto& term : terms) {
      CheckedInt value = 1;
      std::string shown;
      for (std::size_t start = 0; start <= term.size();) {
        std::size_t star = term.find('*', start);
        if (star == std::string::npos) star = term.size();
        const std::string factor = term.substr(start, star - start);
        const bool literal = std::isdigit(static_cast<unsigned char>(factor[0]));
        value *= literal ? std::stoll(factor) : s.get(factor);
        if (!literal) shown += (shown.empty() ? "" : " ") + factor + "=" + std::to_string(s.get(factor));
        start = star + 1;
      }
      if (!value.ok() || value.value() > std::numeric_limits<int32_t>::max())
        return (term.find('*') == std::string::npos ? shown : term + " at " + shown) +
               " exceeds 2^31-1: the op's arguments and kernels count it in a 32-bit int";
    }
    return std::nullopt;
  };
}

// What an argument builder reads from a table: its tensors by name in the storage Float
// (float or bf16) -- for the builders that serve an op and its bf16 twin, whose argument
// structs list the same tensors in the same order, those the twin keeps in bf16 typed
// Float -- and the shape's dims as the int the argument structs hold them in (as_int).
template <class Float>
struct Stored {
  explicit Stored(const TensorTable& t)
      : table(t),
        B(as_int(t.shape().B)),
        T(as_int(t.shape().T)),
        C(as_int(t.shape().C)),
        NH(as_int(t.shape().NH)),
        V(as_int(t.shape().V)),
        Vp(as_int(t.shape().Vp)),
        OC(as_int(t.shape().OC)) {}
  const TensorTable& table;
  int B, T, C, NH, V, Vp, OC;
  Float* operator()(std::string_view name) const;
};
template <>
inline float* Stored<float>::operator()(std::string_view name) const {
  return table.f32(name);
}
template <>
inline bf16* Stored<bf16>::operator()(std::string_view name) const {
  return table.bfloat16(name);
}

// A value of either storage as the float it stands for (exact).
inline float widened(float value) { return value; }
inline float widened(bf16 value) { return to_float(value); }

// A value in the storage Float: as it is in float, rounded to nearest even in bf16.
template <class Float>
Float in_storage(float value) {
  if constexpr (std::is_same_v<Float, bf16>) {
    return to_bf16(value);
  } else {
    return value;
  }
}

// The dims an op reads and why a shape is not valid for it (empty: every shape is),
// which the ops of one file share.
struct Dims {
  std::vector<std::string> names;
  ShapeCheck shape_error;
};

// The spec of the op `name` on `dims`, made on the first call of its accessor (the
// functions the op headers declare): `fill` states the rest of it, its summary first.
// Each accessor passes its own lambda, a type of its own, so each has its own spec.
template <class Args, class Fill>
const OpSpec& define(const char* name, const Dims& dims, Args (*make_args)(const TensorTable&), Fill fill) {
  static const OpSpec op = [&] {
    OpSpec o(name, "");
    o.dims = dims.names;
    o.shape_error = dims.shape_error;
    fill(o);
    o.bind(make_args);
    return o;
  }();
  return op;
}

// The op on bf16 storage whose fp32 twin is `fp32` (OpSpec::fp32_twin says the two
// have the same tensors in the same order and the same scalars), named as the twin with
// "_bf16": the twin's dims, shape check, scalars and flop model, and its tensors with
// every fp32 one stored in bf16 -- but for those named in `kept_fp32` (statistics,
// losses, lse), which the bf16 step keeps in fp32 by design -- and every bf16 output
// held to the twin's tolerance plus the half ulp of its rounding. Integer tensors
// (tokens) stay as they are. The byte model (when the twin states its own, it counts
// fp32 elements) and the prepare step (it reads tensors by their storage) are the
// caller's to set.
template <class Args>
OpSpec bf16_twin(const OpSpec& fp32, std::string summary, Args (*make_args)(const TensorTable&),
                 const std::vector<std::string>& kept_fp32 = {}) {
  OpSpec o(fp32.name + "_bf16", std::move(summary));
  o.dims = fp32.dims;
  o.fp32_twin = fp32.name;
  o.shape_error = fp32.shape_error;
  o.scalars = fp32.scalars;
  o.flops = fp32.flops;
  for (TensorSpec t : fp32.tensors) {
    const bool kept = std::find(kept_fp32.begin(), kept_fp32.end(), t.name) != kept_fp32.end();
    if (t.dtype == DType::f32 && !kept) {
      if (t.checked()) t.tol = rounded_to_bf16(t.tol);
      t = as_bf16(t);
    }
    o.tensors.push_back(t);
  }
  o.bind(make_args);
  return o;
}

// The accessor of the bf16 twin of the op whose accessor is Fp32: bf16_twin of it, made
// on the first call, then `adjust` sets what the twin states for itself (its byte model,
// its prepare step). An fp32 op has one bf16 twin, so Fp32 gives each its own spec.
template <const OpSpec& (*Fp32)(), class Args>
const OpSpec& twin_of(const char* summary, Args (*make_args)(const TensorTable&),
                      const std::vector<std::string>& kept_fp32 = {}, void (*adjust)(OpSpec&) = nullptr) {
  static const OpSpec op = [&] {
    OpSpec o = bf16_twin(Fp32(), summary, make_args, kept_fp32);
    if (adjust) adjust(o);
    return o;
  }();
  return op;
}

// The first reason any of the checks gives.
inline ShapeCheck all_of(std::vector<ShapeCheck> checks) {
  return [checks](const Shape& s) -> std::optional<std::string> {
    for (const auto& check : checks)
      if (auto why = check(s)) return why;
    return std::nullopt;
  };
}

}  // namespace wb::ops
