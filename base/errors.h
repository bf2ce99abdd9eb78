#pragma once
// The error types of the kernels library. The library never exits; wb, the trainer and
// prepare_data turn these into a message and an exit code (kernels/program.h).
#include <stdexcept>

namespace wb {

// Bad input from a user: unknown op or variant, illegal launch parameter, malformed
// shape, unreadable or malformed file. The CLI exits with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A file cannot be read or written (missing folder, permissions, a full disk). The
// CLI exits with 2, as for any bad input.
struct FileError : UsageError {
  using UsageError::UsageError;
};

// The requested backend cannot run here: no usable CUDA device, or a build without
// CUDA. The CLI exits with 3.
struct DeviceUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The one "cannot run here" path: a variant finds at run time that it cannot run this
// problem on this device -- a vendor library offers no algorithm or engine for it, a
// pointer is not aligned for its vector accesses, the shape is beyond the kernels it
// instantiates or the grid it can launch, the device lacks a feature. The harness
// reports the configuration as skipped with this reason, never as incorrect; the
// trainer falls back to the op's default variant. (What is known before the launch
// belongs in Variant::launch_limit, which says the same without running anything.)
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A CUDA, cuBLAS or cuDNN call failed; the message names the call, file and line.
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace wb
