#pragma once
// What every program of wb (wb, the trainer, prepare_data) does around its work: one
// set of exit codes, one mapping of an exception that escaped the work to a message
// and an exit code, and the file-size signal that must not kill a write. Each program
// states how it differs (ExitPolicy); the mapping itself is written once, here.
#include <exception>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace wb::program {

// 0 ok; 1 a check failed (wb), the training failed (trainer); 2 bad usage or input,
// or more memory or another resource than the machine gives; 3 no usable device (and,
// in wb, a device that failed); 4 an internal error (a bug: never read as a failure).
constexpr int kOk = 0, kFailed = 1, kBadInput = 2, kNoDevice = 3, kInternalError = 4;

struct ExitPolicy {
  std::string program;  // "wb": the first word of every message
  // A CUDA, cuBLAS or cuDNN call failed outside a variant's evaluation (BackendError):
  // wb says the device failed (3); for the trainer the training failed (1).
  int backend_error_code = kNoDevice;
  std::string backend_error_text = "error: the device failed: ";
  std::string out_of_memory_hint;  // "a smaller --shape ... may fit"
  std::string bug_text;            // "a bug in wb; please report it with the command line"
  int internal_error_code = kInternalError;
  // The program's own exceptions (the trainer's TrainingFailed, prepare_data's
  // tokenizer::error), tried first: writes the message and returns the exit code, or
  // returns nullopt for any exception that is not one of them.
  std::function<std::optional<int>(const std::exception_ptr&, std::ostream&)> own;
};

// The exit code of an exception that escaped the work, after writing its message to
// `err`: the policy's own exceptions; bad input (wb::UsageError, wb::FileError) 2; no
// usable device 3; a failed backend call as the policy says; out of memory, a size this
// machine cannot allocate, a resource the system refused, a variant this machine cannot
// run (wb::Unsupported) 2; anything else, of any type, an internal error.
int exit_code_for(const std::exception_ptr& e, std::ostream& err, const ExitPolicy& policy);

// Runs a program's work and returns its exit code: SIGXFSZ is ignored first, so that a
// write beyond the file size limit (ulimit -f) fails with EFBIG, which the writers
// report (and the atomic writer cleans up after), instead of killing the process with
// no message; an exception that escapes goes through exit_code_for.
int guarded_main(const ExitPolicy& policy, const std::function<int()>& work, std::ostream& err);

}  // namespace wb::program
