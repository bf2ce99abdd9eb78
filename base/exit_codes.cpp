#include "base/exit_codes.h"

#include <csignal>
#include <new>
#include <stdexcept>
#include <system_error>

#include "base/errors.h"

namespace wb::program {

int exit_code_for(const std::exception_ptr& e, std::ostream& err, const ExitPolicy& policy) {
  const std::string& p = policy.program;
  if (policy.own)
    if (const auto code = policy.own(e, err)) return *code;
  try {
    std::rethrow_exception(e);
  } catch (const UsageError& x) {
    err << p << ": error: " << x.what() << "\n";
    return kBadInput;
  } catch (const DeviceUnavailable& x) {
    err << p << ": error: " << x.what() << "\n";
    return kNoDevice;
  } catch (const BackendError& x) {
    err << p << ": " << policy.backend_error_text << x.what() << "\n";
    return policy.backend_error_code;
  } catch (const Unsupported& x) {
    // A variant found at run time that this machine or its library cannot run the
    // problem (wb's harness makes that a skipped record; the trainer's plan refuses what
    // is known before): what the machine cannot do, not a bug.
    err << p << ": error: this machine cannot run it: " << x.what() << "\n";
    return kBadInput;
  } catch (const std::bad_alloc&) {
    err << p << ": error: out of memory" << (policy.out_of_memory_hint.empty() ? "" : " (" + policy.out_of_memory_hint + ")")
        << "\n";
    return kBadInput;
  } catch (const std::length_error& x) {
    err << p << ": error: a size this machine cannot allocate: " << x.what() << "\n";
    return kBadInput;
  } catch (const std::system_error& x) {  // threads, files: what the system could not give
    err << p << ": error: the system refused a resource: " << x.what() << "\n";
    return kBadInput;
  } catch (const std::exception& x) {
    err << p << ": internal error: " << x.what() << (policy.bug_text.empty() ? "" : " (" + policy.bug_text + ")")
        << "\n";
    return policy.internal_error_code;
  } catch (...) {
    err << p << ": internal error: an exception of unknown type"
        << (policy.bug_text.empty() ? "" : " (" + policy.bug_text + ")") << "\n";
    return policy.internal_error_code;
  }
}

int guarded_main(const ExitPolicy& policy, const std::function<int()>& work, std::ostream& err) {
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return work();
  } catch (...) {
    return exit_code_for(std::current_exception(), err, policy);
  }
}

}  // namespace wb::program
