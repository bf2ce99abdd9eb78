#pragma once
// The op contract. An op is a named computation of the GPT-2 training step: its
// tensors (with their roles, extents and input generators), the scalars it is called
// with, its byte and flop models and its tolerances per numeric class. Its argument
// struct (contract/ops/<op>.h) is what every variant receives. Its CPU reference is
// CPU variant 1, registered from reference/ like any other variant (contract/ never
// includes reference/).
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "contract/shape.h"
#include "contract/types.h"

namespace wb {

struct Launch;
struct Variant;
struct bf16;
class OpSpec;

// |out - ref| <= atol + rtol * |ref| + ulps * ulp(ref), elementwise, where ulp(ref) is
// the spacing of bf16 values at |ref| (2^(e-7) for |ref| in [2^e, 2^(e+1)); 2^-133 below
// 2^-126): a bf16 output rounded once from the exact value is within half an ulp.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double ulps = 0;
};

// The spacing of bf16 values at |x| (x finite).
double bf16_ulp(double x);
using ToleranceFn = std::function<Tolerance(NumericClass, const Shape&)>;

// The same tolerance whatever the shape, one per numeric class.
ToleranceFn tolerance(Tolerance fp32, Tolerance tf32, Tolerance bf16);

// One extent of a tensor: factor * dim ("3C"), or a literal when dim is empty.
struct Extent {
  int64_t factor = 1;
  std::string dim;
  std::string text() const;
};

// How the workbench fills a tensor before a run (the trainer fills its own).
struct Init {
  enum class Kind { uniform, integers };
  Kind kind = Kind::uniform;
  double lo = -1, hi = 1;  // uniform: [lo, hi); integers without upper_dim: [lo, hi)
  std::string upper_dim;   // integers: [0, shape.get(upper_dim))

  static Init uniform(double lo, double hi) { return Init{Kind::uniform, lo, hi, ""}; }
  static Init integers_below(std::string dim) { return Init{Kind::integers, 0, 0, std::move(dim)}; }
  // Integers in [lo, hi), whatever the shape (a step number, a seed); int32 range.
  static Init integers_in(int64_t lo, int64_t hi) { return Init{Kind::integers, double(lo), double(hi), ""}; }
};

struct TensorSpec {
  std::string name;
  Role role = Role::input;
  DType dtype = DType::f32;
  std::vector<Extent> extents;  // e.g. {"B", "T", "3C"}
  Init init = Init::uniform(-1, 1);
  ToleranceFn tol;        // outputs and inouts
  bool optional = false;  // may be null (a linear layer without bias): wb check also runs without it

  std::vector<int64_t> dims(const Shape& s) const;
  int64_t numel(const Shape& s) const;
  std::size_t bytes(const Shape& s) const { return static_cast<std::size_t>(numel(s)) * dtype_size(dtype); }
  std::string extents_text() const;  // "(B, T, 3C)"
  bool checked() const { return role != Role::input; }
};

// Builders for the op catalogue: input("inp", "B,T,C"), output("out", "B,T,C", tol);
// as_bf16(t) stores t in bf16.
TensorSpec input(std::string name, std::string_view extents, Init init = Init::uniform(-1, 1));
TensorSpec token_input(std::string name, std::string_view extents, std::string upper_dim = "V");
TensorSpec output(std::string name, std::string_view extents, ToleranceFn tol);
TensorSpec inout(std::string name, std::string_view extents, ToleranceFn tol, Init init = Init::uniform(-1, 1));
// The same tensor, allowed to be null.
TensorSpec optional(TensorSpec t);
// The same tensor, stored in bf16.
TensorSpec as_bf16(TensorSpec t);

// A scalar argument the op is called with (learning rate, step, dloss...). The
// workbench uses value(shape); the trainer passes its own.
struct ScalarSpec {
  std::string name;
  std::function<double(const Shape&)> value;
  std::string doc;
};

// Runs the CPU reference of an op on host tensors (pointers in the order of its
// tensors); the runtime hands one to OpSpec::prepare.
using ReferenceRunner = std::function<void(const OpSpec& op, const Shape& shape, std::vector<void*> tensors)>;

// Pointers to one set of an op's tensors (host or device memory), in the order of
// OpSpec::tensors, with the shape they were made for. Argument structs are built
// from it by name.
class TensorTable {
 public:
  TensorTable(const OpSpec& op, const Shape& shape, std::vector<void*> data);

  float* f32(std::string_view name) const;
  int32_t* i32(std::string_view name) const;
  bf16* bfloat16(std::string_view name) const;
  double scalar(std::string_view name) const;
  void* data(std::size_t index) const { return data_.at(index); }
  const Shape& shape() const { return shape_; }
  const OpSpec& op() const { return *op_; }

 private:
  void* find(std::string_view name, DType dtype) const;
  const OpSpec* op_;
  Shape shape_;
  std::vector<void*> data_;
};

class OpSpec {
 public:
  OpSpec(std::string name, std::string summary);

  std::string name;
  std::string summary;
  std::vector<std::string> dims;  // the shape dims this op reads
  std::vector<TensorSpec> tensors;
  std::vector<ScalarSpec> scalars;
  // An op on bf16 storage names its twin on fp32 storage: the same tensors in the same
  // order, the same scalars. The twin's reference, run on this op's inputs widened to
  // fp32, is this op's ground truth; its outputs are compared with this op's outputs
  // widened. Empty for the fp32 ops.
  std::string fp32_twin;
  // An op on bf16 storage whose contract no fp32 op states -- it rounds an
  // intermediate that a later op reads back (fused_residual_layernorm_forward_bf16
  // normalises the stored bf16 residual), or it has tensors no fp32 op has (adamw_bf16's
  // master weights) -- has no twin and states its truth itself: its reference variant
  // carries it (Variant::truth). own_truth says why the op has no twin; empty otherwise.
  std::string own_truth;

  // Why a shape is not valid for this op at all (e.g. C % NH != 0); nullopt if valid.
  std::function<std::optional<std::string>(const Shape&)> shape_error;
  std::function<double(const Shape&)> flops;
  // Fewest bytes the op must move. When unset: every input read once, every output
  // written once, every inout read and written.
  std::function<double(const Shape&)> min_bytes;
  // Optional: after random initialisation, make inputs consistent with each other on
  // the host (e.g. mean and rstd computed from inp, by the forward op's reference,
  // which the runtime's ReferenceRunner runs: contract/op.h never reaches the registry).
  std::function<void(const TensorTable&, const ReferenceRunner&)> prepare;

  // Ties the op to its argument struct, built from a table of tensors. Every variant
  // of the op must take the same Args type; the registry checks it.
  template <class Args>
  void bind(Args (*make_args)(const TensorTable&)) {
    args_type_ = typeid(Args);
    make_and_run_ = [make_args](const std::function<void(const void*)>& run, const TensorTable& t) {
      const Args args = make_args(t);
      run(&args);
    };
  }

  // Builds the argument struct from the table and runs the variant on it.
  void invoke(const Variant& v, const TensorTable& t, const Launch& launch) const;

  std::type_index args_type() const { return args_type_; }
  // "fp32", or "bf16" when any of its tensors is stored in bf16 (the rest are then
  // fp32 or integers by design: layernorm statistics, losses, master weights).
  std::string storage() const;

  const TensorSpec& tensor(std::string_view name) const;  // throws std::out_of_range
  std::optional<std::size_t> tensor_index(std::string_view name) const;
  const ScalarSpec& scalar(std::string_view name) const;

  double bytes(const Shape& s) const;
  double flop_count(const Shape& s) const { return flops ? flops(s) : 0.0; }
  // Throws UsageError when the shape is not valid for this op.
  void check_shape(const Shape& s) const;
  std::string describe_shape(const Shape& s) const { return wb::describe(s, dims); }

 private:
  std::type_index args_type_ = typeid(void);
  std::function<void(const std::function<void(const void*)>&, const TensorTable&)> make_and_run_;
};

}  // namespace wb
