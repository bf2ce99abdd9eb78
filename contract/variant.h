#pragma once
// The variant contract: one implementation of one op on one backend, with a stable
// integer id (never renumbered; 1 is the naive port), its tunable launch parameters
// and their legal values, its numeric class, its requirements on the shape and its
// workspace. A variant that cannot run a shape or a configuration says why
// (skip_reason); that is never a failure.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>
#include <vector>

#include "contract/exec_context.h"
#include "contract/shape.h"
#include "contract/types.h"

namespace wb {

// A tunable launch parameter and its legal values; block sizes come first.
class TensorTable;  // contract/op.h

struct TuningParam {
  std::string name;
  std::vector<int> values;
  int default_value = 0;
};

// The usual block-size axis: 32..1024 in powers of two.
TuningParam block_size_param(std::vector<int> values = {32, 64, 128, 256, 512, 1024}, int default_value = 256);

// Chosen values of a variant's tuning parameters, in the variant's order.
class ParamValues {
 public:
  ParamValues() = default;
  ParamValues(std::initializer_list<std::pair<std::string, int>> items) : items_(items) {}

  void set(const std::string& name, int value);
  std::optional<int> find(std::string_view name) const;
  int get(std::string_view name) const;  // throws std::logic_error when absent
  const std::vector<std::pair<std::string, int>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  std::string describe() const;  // "block_size=256", or "-" when empty
  bool operator==(const ParamValues& o) const { return items_ == o.items_; }

 private:
  std::vector<std::pair<std::string, int>> items_;
};

struct Requirement {
  std::string text;  // "C % 4 == 0"
  std::function<bool(const Shape&)> holds;
};

// Everything a variant gets besides its argument struct.
struct Launch {
  ParamValues params;
  void* workspace = nullptr;  // device memory on cuda, host memory on cpu
  std::size_t workspace_bytes = 0;
  ExecContext* ctx = nullptr;

  int get(std::string_view name) const { return params.get(name); }
  int block_size() const { return params.get("block_size"); }
};

struct Variant {
  // What the file's path says, "variants/<op>/NN_name.cu" or "cpu_NN_name.cpp": filled
  // in by the registry (a variant file states only what is its own).
  std::string op;
  Backend backend = Backend::cpu;
  int id = 0;
  std::string name;     // short, snake_case: "warp_per_row"
  std::string summary;  // one line: the idea
  NumericClass numeric = NumericClass::fp32;
  std::vector<TuningParam> params;
  std::vector<Requirement> requirements;
  // Why a legal configuration cannot run a shape (e.g. the row does not fit the
  // registers a block size leaves); nullopt when it can.
  std::function<std::optional<std::string>(const Shape&, const ParamValues&)> launch_limit;
  // Workspace bytes for a shape and configuration; unset means none.
  std::function<std::size_t(const Shape&, const ParamValues&)> workspace;
  // Whether two runs on the same inputs give bitwise equal outputs (no float atomics
  // whose order varies); unset: always. A variant that claims it and differs between
  // two runs (two thread orders under the emulator) is incorrect.
  std::function<bool(const ParamValues&)> deterministic;
  // Why the emulator cannot run this CUDA variant ("needs cuDNN", "needs TF32 tensor
  // cores"); empty when it can. Reported as its own status, never as a failure.
  std::string not_emulated;
  // The lowest compute capability that can run this CUDA variant (80: sm_80, for TF32
  // tensor cores); 0 when any can. A device below it skips the variant with the reason.
  int min_compute_capability = 0;
  std::type_index args_type = typeid(void);
  std::function<void(const void*, const Launch&)> run;
  // The ground truth of an op with no fp32 twin (OpSpec::own_truth), on its reference
  // variant only: it runs on a table of the op's tensors with every bf16 one widened to
  // fp32 storage, and leaves there what the outputs are before their final rounding (in
  // double where it helps; the intermediates the contract rounds rounded to bf16
  // values). So, as with a twin, bf16 outputs are compared with unrounded values: one
  // rounding is half an ulp beyond the fp32 tolerance.
  std::function<void(const TensorTable&)> truth;
  std::string source;       // file, relative to the repository (set by the registry)
  // Its identity (base/source_identity.h): the SHA-256 of the code the device build
  // compiles for it, normalised; what a device verification is keyed to (set by the
  // registry from the table wb_identity writes at build time).
  std::string source_hash;

  // A variant running fn, an implementation taking the op's argument struct. A CUDA
  // variant the emulator cannot run passes no fn in the emulator's build
  // (WB_DEVICE_ONLY, device/cuda/dialect.cuh) and says why in not_emulated; the
  // registry's stub stands in.
  template <class Args>
  static Variant of(void (*fn)(const Args&, const Launch&)) {
    Variant v;
    v.args_type = typeid(Args);
    if (fn) v.run = [fn](const void* args, const Launch& launch) { fn(*static_cast<const Args*>(args), launch); };
    return v;
  }

  // The CPU reference of `op` as its CPU variant 1 (reference/ registers one per op).
  template <class Args>
  static Variant reference(std::string op, void (*fn)(const Args&)) {
    Variant v;
    v.op = std::move(op);
    v.backend = Backend::cpu;
    v.id = 1;
    v.name = "reference";
    v.summary = "the CPU reference: plain loops, the ground truth every variant is checked against";
    v.args_type = typeid(Args);
    v.run = [fn](const void* args, const Launch&) { fn(*static_cast<const Args*>(args)); };
    return v;
  }

  // The CPU reference of an op on bf16 storage (the ground truth is its fp32 twin's):
  // fp32 arithmetic on the widened inputs, each output rounded once.
  template <class Args>
  static Variant reference_port(std::string op, void (*fn)(const Args&)) {
    Variant v = reference(std::move(op), fn);
    v.summary = "the CPU reference port: the fp32 twin's arithmetic on the widened inputs, outputs rounded once to "
                "nearest even";
    return v;
  }

  // The CPU reference port of an op on bf16 storage that states its own truth.
  template <class Args>
  static Variant reference_port(std::string op, void (*fn)(const Args&), void (*truth)(const TensorTable&)) {
    Variant v = reference(std::move(op), fn);
    v.summary = "the CPU reference port: its truth's arithmetic, outputs rounded once to nearest even";
    v.truth = truth;
    return v;
  }

  ParamValues default_params() const;
  bool claims_deterministic(const ParamValues& p) const { return !deterministic || deterministic(p); }
  // Every combination of legal values (a single empty set when there are none).
  std::vector<ParamValues> all_params() const;
  // Throws UsageError on an unknown parameter or an illegal value, naming the legal ones.
  void check_params(const ParamValues& p) const;
  // Fills parameters that p leaves out with their defaults (after check_params).
  ParamValues complete(const ParamValues& p) const;
  std::optional<std::string> skip_reason(const Shape& s, const ParamValues& p) const;
  std::size_t workspace_bytes(const Shape& s, const ParamValues& p) const;

  std::string key() const;          // "layernorm_forward cuda/3"
  std::string label() const;        // "cuda/3 warp_per_row"
  std::string params_text() const;  // "block_size 32..1024", "-" when none
  std::string requirements_text() const;
};

std::string describe_values(const std::vector<int>& values);  // "32..1024" or "64, 128, 256"

}  // namespace wb
