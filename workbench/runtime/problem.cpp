#include "workbench/runtime/problem.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "base/bf16.h"
#include "base/checked.h"
#include "base/errors.h"
#include "contract/registry.h"
#include "contract/variant.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/rng.h"
#include "workbench/runtime/validate.h"

namespace wb {
namespace {

std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

// The op whose tensors hold the ground truth: the op; its fp32 twin, which must have
// the same tensors in the same order (stored in fp32 where the op stores bf16); or, for
// an op that states its own truth (OpSpec::own_truth), a copy of it with every bf16 tensor
// widened to fp32, made once per op.
const OpSpec* truth_of(const Registry& registry, const OpSpec& op) {
  if (!op.own_truth.empty()) {
    static std::mutex mutex;
    static std::map<const OpSpec*, std::unique_ptr<OpSpec>> widened;
    const std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<OpSpec>& copy = widened[&op];
    if (!copy) {
      copy = std::make_unique<OpSpec>(op);
      for (TensorSpec& t : copy->tensors)
        if (t.dtype == DType::bf16) t.dtype = DType::f32;
    }
    return copy.get();
  }
  if (op.fp32_twin.empty()) return &op;
  const OpSpec& twin = registry.op(op.fp32_twin);
  bool same = twin.tensors.size() == op.tensors.size() && twin.dims == op.dims;
  for (std::size_t i = 0; same && i < op.tensors.size(); ++i) {
    const TensorSpec &a = op.tensors[i], &b = twin.tensors[i];
    same = a.name == b.name && a.role == b.role && a.extents_text() == b.extents_text() &&
           (a.dtype == b.dtype || (a.dtype == DType::bf16 && b.dtype == DType::f32));
  }
  if (!same) throw std::logic_error(op.name + ": its fp32 twin " + twin.name + " does not have the same tensors");
  return &twin;
}

// The shape, once valid for the op and small enough for the Problem's two host sets.
const Shape& valid_shape(const OpSpec& op, const Shape& shape) {
  op.check_shape(shape);
  check_fits(op, shape, 2, host_memory_bytes(), "host memory", "the inputs and the reference's outputs");
  return shape;
}

}  // namespace

int64_t tensor_set_bytes(const OpSpec& op, const Shape& shape) {
  CheckedInt total = 0;
  for (const auto& t : op.tensors) total += int64_t(t.bytes(shape));
  if (!total.ok()) throw std::logic_error("tensor_set_bytes: the shape did not pass check_shape");
  return total.value();
}

void check_fits(const OpSpec& op, const Shape& shape, int64_t sets, int64_t available, const std::string& memory,
                const std::string& purpose) {
  if (available <= 0) return;
  const double needed = double(sets) * double(tensor_set_bytes(op, shape));
  if (needed <= double(available)) return;
  throw UsageError(op.name + " at " + op.describe_shape(shape) + " needs " + format_bytes(needed) + " of " + memory +
                   " (" + std::to_string(sets) + (sets == 1 ? " set" : " sets") + " of its tensors: " + purpose +
                   "); " + memory + " holds " + format_bytes(double(available)));
}

void fill_inputs(const HostTensors& t, uint64_t seed, const Registry& registry) {
  const OpSpec& op = *t.op;
  for (std::size_t i = 0; i < op.tensors.size(); ++i) {
    const TensorSpec& spec = op.tensors[i];
    void* data = t.buffers[i].data();
    const int64_t n = spec.numel(t.shape);
    if (spec.role == Role::output) {
      std::memset(data, 0xFF, spec.bytes(t.shape));
      continue;
    }
    Rng rng(seed, spec.name);
    if (spec.init.kind == Init::Kind::integers) {
      const bool by_dim = !spec.init.upper_dim.empty();
      const int64_t lo = by_dim ? 0 : int64_t(spec.init.lo);
      const int64_t upper = by_dim ? t.shape.get(spec.init.upper_dim) : int64_t(spec.init.hi) - lo;
      auto* p = static_cast<int32_t*>(data);
      for (int64_t k = 0; k < n; ++k) p[k] = int32_t(lo + int64_t(rng.below(upper)));
    } else if (spec.dtype == DType::bf16) {
      auto* p = static_cast<bf16*>(data);
      for (int64_t k = 0; k < n; ++k) p[k] = to_bf16(float(rng.uniform(spec.init.lo, spec.init.hi)));
    } else {
      auto* p = static_cast<float*>(data);
      for (int64_t k = 0; k < n; ++k) p[k] = float(rng.uniform(spec.init.lo, spec.init.hi));
    }
  }
  if (op.prepare)
    op.prepare(t.table(), [&registry](const OpSpec& other, const Shape& shape, std::vector<void*> tensors) {
      registry.run_reference(other, shape, std::move(tensors));
    });
}

std::vector<std::string> Problem::omitted() const {
  std::vector<std::string> out;
  for (const auto& t : op->tensors)
    if (!present(t)) out.push_back(t.name);
  return out;
}

Problem::Problem(const Registry& registry, const OpSpec& op_, const Shape& shape_, uint64_t seed_,
                 bool omit_optional_)
    : op(&op_),
      truth(truth_of(registry, op_)),
      shape(valid_shape(op_, shape_)),
      seed(seed_),
      omit_optional(omit_optional_),
      initial(op_, shape_),
      expected(*truth, shape_) {
  fill_inputs(initial, seed_, registry);
  for (std::size_t i = 0; i < op_.tensors.size(); ++i) {
    const TensorSpec& t = op_.tensors[i];
    if (t.dtype != truth->tensors[i].dtype) {  // widened: the truth sees exactly the values the variants see
      const auto* from = static_cast<const bf16*>(initial.buffers[i].data());
      auto* to = static_cast<float*>(expected.buffers[i].data());
      const int64_t n = t.numel(shape_);
      for (int64_t k = 0; k < n; ++k) to[k] = to_float(from[k]);
    } else {
      std::memcpy(expected.buffers[i].data(), initial.buffers[i].data(), initial.buffers[i].bytes());
    }
  }
  if (!op_.own_truth.empty()) {
    const Variant& reference = registry.reference(op_.name);
    if (!reference.truth) throw std::logic_error(op_.name + ": its reference variant carries no truth");
    reference.truth(expected.table(omit_optional));
  } else {
    truth->invoke(registry.reference(truth->name), expected.table(omit_optional), Launch{});
  }
  for (std::size_t i = 0; i < truth->tensors.size(); ++i) {
    const TensorSpec& spec = truth->tensors[i];
    if (!spec.checked() || !present(spec)) continue;
    const int64_t n = spec.numel(shape_);
    const TensorCheck self = compare(spec, expected.buffers[i].data(), expected.buffers[i].data(), n, Tolerance{});
    if (self.non_finite)
      throw std::logic_error("the reference of " + op_.name + " left " + std::to_string(self.non_finite) +
                             " non-finite values in " + spec.name);
  }
}

}  // namespace wb
