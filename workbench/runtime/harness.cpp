#include "workbench/runtime/harness.h"

#include <cstring>
#include <stdexcept>

#include "base/errors.h"
#include "contract/variant_errors.h"
#include "workbench/runtime/can_run.h"
#include "workbench/runtime/torch_rung.h"

namespace wb {

Record record_for(const OpSpec& op, const Variant& v, const ParamValues& params, const Shape& shape) {
  Record r;
  r.op = op.name;
  r.backend = v.backend;
  r.variant = v.id;
  r.variant_name = v.name;
  r.numeric = v.numeric;
  r.source = v.source;
  r.source_hash = v.source_hash;
  r.params = params;
  r.dims = op.dims;
  r.shape = shape;
  r.bytes = op.bytes(shape);
  r.flops = op.flop_count(shape);
  return r;
}

void check_session_fits(const OpSpec& op, const Shape& shape, const Executor& ex) {
  op.check_shape(shape);
  const bool host_backend = ex.backend() != Backend::cuda;
  check_fits(op, shape, host_backend ? 6 : 5, host_memory_bytes(), "host memory",
             host_backend ? "inputs, reference outputs, the downloads of the runs and the variant's own"
                          : "inputs, reference outputs and the downloads of the runs");
  if (!host_backend)
    check_fits(op, shape, 1, ex.device().memory_bytes, "the memory of " + ex.device().name, "the variant's own");
}

namespace {

const Shape& fitting_shape(const OpSpec& op, const Shape& shape, const Executor& ex) {
  check_session_fits(op, shape, ex);
  return shape;
}

std::size_t checked_misalign(std::size_t bytes) {
  if (bytes % 4 != 0 || bytes >= 16)
    throw UsageError("misalignment of " + std::to_string(bytes) +
                     " bytes: give 0, 4, 8 or 12 (tensors hold 4-byte elements)");
  return bytes;
}

}  // namespace

Session::Session(const Registry& registry, const OpSpec& op, const Shape& shape, uint64_t seed, Executor& ex,
                 bool omit_optional, std::size_t misalign)
    : registry_(registry),
      op_(op),
      problem_(registry, op, fitting_shape(op, shape, ex), seed, omit_optional),
      ex_(ex),
      on_device_(ex, op, shape, checked_misalign(misalign)),
      last_(op, shape),
      scratch_(op, shape) {
  for (std::size_t i = 0; i < op.tensors.size(); ++i)
    if (op.tensors[i].role == Role::input && problem_.present(op.tensors[i]))
      ex_.to_device(on_device_.buffers[i].data(), problem_.initial.buffers[i].data(), on_device_.buffers[i].bytes());
}

void Session::invoke(const Variant& v, const TensorTable& table, const Launch& launch) {
  if (is_torch_rung(v)) {
    TorchCall(v, table, launch.params, ex_).run();
    return;
  }
  op_.invoke(v, table, launch);
}

Session::Outcome Session::run_and_check(const Variant& v, const Launch& launch) {
  const Shape& shape = problem_.shape;
  for (std::size_t i = 0; i < op_.tensors.size(); ++i) {
    const auto& spec = op_.tensors[i];
    auto& dst = on_device_.buffers[i];
    if (!problem_.present(spec)) continue;
    if (spec.role == Role::inout) ex_.to_device(dst.data(), problem_.initial.buffers[i].data(), dst.bytes());
    if (spec.role == Role::output) ex_.poison(dst.data(), dst.bytes());
  }
  invoke(v, on_device_.table(problem_.omit_optional), launch);
  ex_.synchronize();

  Outcome out;
  for (std::size_t i = 0; i < op_.tensors.size(); ++i) {
    const auto& spec = op_.tensors[i];
    const auto& src = on_device_.buffers[i];
    if (!problem_.present(spec)) continue;
    if (spec.role == Role::input) {
      ex_.to_host(scratch_.buffers[i].data(), src.data(), src.bytes());
      if (std::memcmp(scratch_.buffers[i].data(), problem_.initial.buffers[i].data(), src.bytes()) != 0 &&
          out.failure.empty())
        out.failure = "the input '" + spec.name + "' was modified";
      continue;
    }
    ex_.to_host(last_.buffers[i].data(), src.data(), src.bytes());
    TensorCheck c =
        compare(spec, last_.buffers[i].data(), problem_.truth->tensors[i].dtype, problem_.expected.buffers[i].data(),
                spec.numel(shape), spec.tol(v.numeric, shape), row_rule(spec, shape, v.numeric));
    if (!c.passed() && out.failure.empty()) out.failure = c.describe();
    out.checks.push_back(std::move(c));
  }
  return out;
}

std::string device_lost_reason(const std::string& fault) { return "device lost: " + fault; }

Record not_run_record(const OpSpec& op, const Variant& v, const ParamValues& params, const Shape& shape,
                      bool omit_optional, uint64_t seed, const std::string& fault) {
  Record r = record_for(op, v, params, shape);
  r.seed = seed;
  if (omit_optional)
    for (const auto& t : op.tensors)
      if (t.optional) r.omitted.push_back(t.name);
  r.status = Status::not_run;
  r.reason = device_lost_reason(fault);
  return r;
}

Record Session::evaluate(const Variant& v, const ParamValues& params, const EvalOptions& options) {
  ex_.take_notes();  // what earlier work noted is not this configuration's
  ex_.take_counters("");
  const std::string configuration = params.describe();
  ex_.working_on(v.key() + (configuration == "-" ? "" : " " + configuration));
  Record r = evaluate_once(v, params, options);
  ex_.working_on("");
  r.notes = ex_.take_notes();
  return r;
}

Record Session::evaluate_once(const Variant& v, const ParamValues& params, const EvalOptions& options) {
  if (auto fault = ex_.lost())
    return not_run_record(op_, v, params, problem_.shape, problem_.omit_optional, problem_.seed, *fault);
  Record r = record_for(op_, v, params, problem_.shape);
  r.seed = problem_.seed;
  r.omitted = problem_.omitted();
  if (auto refusal = why_cannot_run(registry_, v, problem_.shape, params, ex_.device())) {
    r.status = refusal->not_emulated(ex_.backend()) ? Status::not_emulated : Status::skipped;
    r.reason = refusal->reason;
    return r;
  }
  try {
    Buffer workspace(ex_, v.workspace_bytes(problem_.shape, params));
    Launch launch;
    launch.params = params;
    launch.workspace = workspace.data();
    launch.workspace_bytes = workspace.bytes();
    launch.ctx = ex_.context();

    ex_.begin_run(0, problem_.seed);
    Outcome first = run_and_check(v, launch);
    r.counters = ex_.take_counters(v.source);  // counting (emu --counters) counts this run
    r.errors = first.checks;
    if (!first.failure.empty()) {
      r.status = Status::incorrect;
      r.reason = first.failure;
      return r;
    }
    // Second run on the same inputs (under the emulator, in another thread order):
    // bitwise equal outputs make the variant deterministic.
    auto compared = [&](std::size_t i) { return op_.tensors[i].checked() && problem_.present(op_.tensors[i]); };
    HostTensors first_outputs(op_, problem_.shape);
    for (std::size_t i = 0; i < op_.tensors.size(); ++i)
      if (compared(i)) std::memcpy(first_outputs.buffers[i].data(), last_.buffers[i].data(), last_.buffers[i].bytes());
    ex_.begin_run(1, problem_.seed);
    Outcome second = run_and_check(v, launch);
    bool same = true;
    std::string differs;
    for (std::size_t i = 0; i < op_.tensors.size(); ++i)
      if (compared(i) &&
          std::memcmp(first_outputs.buffers[i].data(), last_.buffers[i].data(), last_.buffers[i].bytes()) != 0) {
        same = false;
        if (differs.empty()) differs = op_.tensors[i].name;
      }
    r.deterministic = same;
    if (!second.failure.empty()) {
      r.status = Status::incorrect;
      r.reason = "second run: " + second.failure;
      r.errors = second.checks;
      return r;
    }
    if (!same && v.claims_deterministic(params)) {
      r.status = Status::incorrect;
      r.reason = "claims to be deterministic, but two runs on the same inputs" +
                 std::string(ex_.backend() == Backend::emu ? " (two thread orders)" : "") + " differ in '" + differs +
                 "'";
      return r;
    }

    const TensorTable table = on_device_.table(problem_.omit_optional);
    auto launch_once = [&] { invoke(v, table, launch); };
    if (options.timer && is_torch_rung(v)) {
      // Timed where PyTorch runs it, on the tensors it holds: not the copies between the
      // processes (torch_rung.h).
      TorchCall call(v, table, launch.params, ex_);
      r.timing = options.timer([&] { call.time(); }, v.key() + " " + params.describe(), [&] { return call.time(); });
    } else if (options.timer) {
      r.timing = options.timer(launch_once, v.key() + " " + params.describe(), {});
    } else {
      for (int i = 0; i < options.check_launches; ++i) {
        ex_.begin_run(2 + i, problem_.seed);
        launch_once();
      }
      ex_.synchronize();
    }

    ex_.begin_run(Executor::kLastRun, problem_.seed);
    Outcome after = run_and_check(v, launch);
    if (!after.failure.empty()) {
      r.status = Status::incorrect;
      r.reason = (ex_.backend() == Backend::emu ? "third run (each warp alone from one barrier to the next, the "
                                                  "blocks started reversed or shuffled with block 0 last): "
                                                : "after the timing loop: ") +
                 after.failure;
      r.errors = after.checks;
      return r;
    }
    r.status = Status::ok;
  } catch (const Unsupported& e) {
    r.status = Status::skipped;
    r.reason = e.what();
    r.errors.clear();
    r.deterministic.reset();
    r.timing.reset();
    r.counters.reset();
  } catch (const VariantFileError&) {
    // A mistake in the variant's file (a launch parameter read and never declared):
    // every configuration would fail alike, so the command stops with the file and the
    // fix (exit 2) rather than reporting each one as incorrect.
    throw;
  } catch (const std::exception& e) {  // whatever the variant threw: a CUDA error, a refused pointer, ...
    // A sticky fault also loses the device (ex_.lost() says so from now on): the
    // caller records what is left as not run. A refused launch loses nothing.
    r.status = Status::incorrect;
    r.reason = e.what();
  }
  return r;
}

}  // namespace wb
