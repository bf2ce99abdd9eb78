#pragma once
// Stackful fibers for the emulator: Boost.Context's fcontext switch, stacks with a
// guard page, and the sanitizer hooks a stack switch needs (ASan's
// start/finish_switch_fiber, TSan's fiber API). Internal to emu/.
#include <boost/context/detail/fcontext.hpp>
#include <cstddef>
#include <vector>

// The flavour of the build (CMake's WB_SANITIZE), also in files that are compiled
// without the sanitizer's instrumentation themselves (the emulator's core under TSan,
// emu/CMakeLists.txt).
#if defined(__SANITIZE_ADDRESS__) || WB_SANITIZE_ADDRESS
#define WB_EMU_ASAN 1
#else
#define WB_EMU_ASAN 0
#endif
#if defined(__SANITIZE_THREAD__) || WB_SANITIZE_THREAD
#define WB_EMU_TSAN 1
#else
#define WB_EMU_TSAN 0
#endif

// Whether the kernels report their memory accesses (emu/tsan_hooks.cpp): set for
// scheduler.cpp by the build, in the plain flavour.
#ifndef WB_EMU_REPORTS_ACCESSES
#define WB_EMU_REPORTS_ACCESSES 0
#endif

// The emulator's own bookkeeping is shared by the fibers of a block by design (they
// take turns on one OS thread); ThreadSanitizer must not see it as kernel memory.
#if WB_EMU_TSAN
#define WB_EMU_NO_TSAN __attribute__((no_sanitize("thread")))
#else
#define WB_EMU_NO_TSAN
#endif

namespace wb::emu::fiber {

using context = boost::context::detail::fcontext_t;
using transfer = boost::context::detail::transfer_t;

// A stack: mmap'ed, with a PROT_NONE guard page below it so that an overflow faults.
struct Stack {
  void* base = nullptr;  // lowest usable address
  std::size_t size = 0;  // usable bytes
  void* top() const { return static_cast<char*>(base) + size; }
};

// Stacks of one OS thread, reused from block to block.
class StackPool {
 public:
  ~StackPool();
  Stack get(std::size_t i);  // the i-th stack, created on first use
  // The i-th stack, unmapped and mapped afresh: under ThreadSanitizer a stack that a
  // thread of an earlier block used would carry that thread's accesses, and what two
  // threads keep on their stacks is theirs alone (CUDA's local memory), never a race.
  // munmap makes TSan forget them.
  Stack fresh(std::size_t i);
  static std::size_t stack_bytes();

 private:
  std::vector<Stack> stacks_;
};

// The per-fiber state of the sanitizers.
struct Sanitizer {
  void* tsan_fiber = nullptr;
  void* asan_fake_stack = nullptr;
};

// Hooks around a switch from the current context to a context whose stack is
// [bottom, bottom + size); `finishing` when the current fiber will never run again.
void before_switch(Sanitizer& from, const Sanitizer& to, const void* bottom, std::size_t size, bool finishing);
// After arriving in a context; returns (through *bottom, *size) the stack we came from.
void after_switch(Sanitizer& self, const void** bottom, std::size_t* size);

void* create_tsan_fiber();
void destroy_tsan_fiber(void* f);
void* current_tsan_fiber();

// ThreadSanitizer happens-before edges (no-ops in other builds).
void release(void* sync_object);
void acquire(void* sync_object);

}  // namespace wb::emu::fiber
