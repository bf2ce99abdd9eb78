#include <stdexcept>

#include "base/errors.h"
#include "workbench/runtime/executor.h"

namespace wb {

std::unique_ptr<Executor> make_host_executor();
std::unique_ptr<Executor> make_emu_executor();
#if WB_HAVE_CUDA
std::optional<std::string> cuda_probe();
std::unique_ptr<Executor> make_cuda_executor();
#endif

std::optional<std::string> cuda_unavailable_reason() {
#if WB_HAVE_CUDA
  static const std::optional<std::string> reason = cuda_probe();
  return reason;
#else
  return std::string("this wb was built without CUDA (nvcc was not found when it was configured)");
#endif
}

void Markers::check_index(std::size_t i, const char* call) const {
  if (i >= recorded_.size())
    throw std::logic_error(std::string(call) + ": marker " + std::to_string(i) + " of a pool of " +
                           std::to_string(recorded_.size()));
}

void Markers::check_recorded(std::size_t i, std::size_t j) const {
  check_index(i, "Markers::seconds_between");
  check_index(j, "Markers::seconds_between");
  for (std::size_t k : {i, j})
    if (!recorded_[k])
      throw std::logic_error("Markers::seconds_between: marker " + std::to_string(k) + " was never recorded");
}

void SteadyClockMarkers::record(std::size_t i) {
  check_index(i, "Markers::record");
  at_[i] = std::chrono::steady_clock::now();
  recorded_[i] = true;
}

double SteadyClockMarkers::seconds_between(std::size_t i, std::size_t j) {
  check_recorded(i, j);
  return std::chrono::duration<double>(at_[j] - at_[i]).count();
}

void Executor::set_strict_sync(bool strict) {
  if (strict)
    throw UsageError("--strict-sync is a check of the emulator (--backend emu), not of the " +
                     std::string(to_string(backend())) + " backend");
}

void Executor::set_counting(bool on, uint64_t, bool) {
  if (on)
    throw UsageError(
        "--counters: the emulator counts what warps ask of memory (--backend emu); the " +
        std::string(to_string(backend())) + " backend does not (on a GPU, Nsight Compute does: docs/counters.md)");
}

void Executor::begin_capture() { throw UsageError(capture_unsupported().value_or("begin_capture: not implemented")); }

std::unique_ptr<CapturedGraph> Executor::end_capture() {
  throw UsageError(capture_unsupported().value_or("end_capture: not implemented"));
}

void Executor::replay(const CapturedGraph&) {
  throw UsageError(capture_unsupported().value_or("replay: not implemented"));
}

std::unique_ptr<Executor> make_executor(Backend b) {
  if (b == Backend::cpu) return make_host_executor();
  if (b == Backend::emu) return make_emu_executor();
  if (auto why = cuda_unavailable_reason()) throw DeviceUnavailable("no usable CUDA device: " + *why);
#if WB_HAVE_CUDA
  return make_cuda_executor();
#else
  throw DeviceUnavailable("no usable CUDA device");
#endif
}

Backend default_backend() { return cuda_unavailable_reason() ? Backend::cpu : Backend::cuda; }

}  // namespace wb
