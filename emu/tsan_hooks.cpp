// The emulator's runtime behind the compiler's ThreadSanitizer instrumentation. In the
// plain build the kernels compiled for the emulator are instrumented
// (-fsanitize=thread at compile time only, contract/CMakeLists.txt): before each memory
// access that may touch memory shared between threads, the compiler calls one of the
// entry points below (__tsan_read4, __tsan_volatile_write8, __tsan_atomic32_fetch_add,
// ...). No sanitizer runtime is linked: these definitions take its place, as the Linux
// kernel's KCSAN puts its own behind the same instrumentation. Outside a kernel (host
// code of the same files) they do nothing; inside one they tell the scheduler
// (on_access, emu/scheduler.cpp), which may switch to another thread of the block
// there, and they perform the atomic operations themselves. Plain accesses are
// reported only in the interleaving pass and with counting on; volatile and atomic ones
// always (a thread polling a flag must let the others run).
//
// Not compiled into the ThreadSanitizer flavour, where libtsan owns these names.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "emu/emu.h"
#include "emu/internal.h"

namespace {

using wb::emu::Access;
namespace detail = wb::emu::detail;

// Outside a kernel (host code of the same files) nothing is reported.
inline bool in_kernel() { return detail::current_builtins != nullptr; }

inline void report(const volatile void* address, std::size_t bytes, Access kind, const void* pc) {
  wb::emu::on_access(const_cast<const void*>(address), bytes, kind, pc);
}

// Plain reads matter only to the interleaving pass and to counting (the flag is set only
// while a kernel's thread runs: one test on the fast path). Plain writes inside a kernel
// are reported in every pass, so that one into a canary faults as it is made, naming
// the thread and the line, in the first run already (the canaries' scan after the
// block or the launch could name only the buffer); outside the interleaving pass and
// counting, on_access returns after that check.
inline void plain(const void* address, std::size_t bytes, Access kind, const void* pc) {
  if (detail::report_plain_accesses || (kind == Access::write && in_kernel())) report(address, bytes, kind, pc);
}

#define WB_PC __builtin_return_address(0)

// The memory orders of the instrumentation's atomics are those of the C++ builtins;
// the emulator runs every atomic sequentially consistent, which is at least as strong.
constexpr int kOrder = __ATOMIC_SEQ_CST;

// Atomics that may write take the emulator's lock first (lock_atomics, emu/internal.h),
// which their report lets go.
// After an atomic read-modify-write: a write when it changed the value (progress, to
// the watchdog), a read when it left it as it was (a failed compare-and-swap,
// atomicAdd(p, 0): the usual ways to poll a flag, where the scheduler switches
// threads).
template <class T>
inline void modified(const volatile T* a, T before, T after, const void* pc) {
  if (in_kernel()) report(a, sizeof(T), before != after ? Access::atomic_write : Access::atomic_read, pc);
}

template <class T>
T atomic_load(const volatile T* a, const void* pc) {
  if (in_kernel()) report(a, sizeof(T), Access::atomic_read, pc);
  return __atomic_load_n(a, kOrder);
}
template <class T>
void atomic_store(volatile T* a, T v, const void* pc) {
  if (in_kernel()) wb::emu::internal::lock_atomics();
  __atomic_store_n(a, v, kOrder);
  if (in_kernel()) report(a, sizeof(T), Access::atomic_write, pc);
}
template <class T>
bool atomic_cas(volatile T* a, T* expected, T desired, const void* pc) {
  const T seen = *expected;
  if (in_kernel()) wb::emu::internal::lock_atomics();
  const bool swapped = __atomic_compare_exchange_n(a, expected, desired, false, kOrder, kOrder);
  modified(a, seen, swapped ? desired : seen, pc);
  return swapped;
}

}  // namespace

namespace wb::emu {

// atomicAdd on a float (emu.h): a compare-and-swap loop, reported once.
float atomic_add_float(float* address, float value) {
  auto* p = reinterpret_cast<uint32_t*>(address);
  if (in_kernel()) wb::emu::internal::lock_atomics();
  uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    float f;
    std::memcpy(&f, &old, sizeof f);
    const float sum = f + value;
    uint32_t bits;
    std::memcpy(&bits, &sum, sizeof bits);
    if (__atomic_compare_exchange_n(p, &old, bits, false, kOrder, kOrder)) {
      modified(p, old, bits, WB_PC);
      return f;
    }
  }
}

}  // namespace wb::emu

extern "C" {

void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}

#define WB_PLAIN(n)                                                                                      \
  void __tsan_read##n(void* a) { plain(a, n, Access::read, WB_PC); }                                    \
  void __tsan_write##n(void* a) { plain(a, n, Access::write, WB_PC); }                                  \
  void __tsan_unaligned_read##n(void* a) { plain(a, n, Access::read, WB_PC); }                          \
  void __tsan_unaligned_write##n(void* a) { plain(a, n, Access::write, WB_PC); }                        \
  void __tsan_volatile_read##n(void* a) {                                                                \
    if (in_kernel()) report(a, n, Access::volatile_read, WB_PC);                                         \
  }                                                                                                      \
  void __tsan_volatile_write##n(void* a) {                                                               \
    if (in_kernel()) report(a, n, Access::volatile_write, WB_PC);                                        \
  }                                                                                                      \
  void __tsan_unaligned_volatile_read##n(void* a) {                                                      \
    if (in_kernel()) report(a, n, Access::volatile_read, WB_PC);                                         \
  }                                                                                                      \
  void __tsan_unaligned_volatile_write##n(void* a) {                                                     \
    if (in_kernel()) report(a, n, Access::volatile_write, WB_PC);                                        \
  }
WB_PLAIN(1)
WB_PLAIN(2)
WB_PLAIN(4)
WB_PLAIN(8)
WB_PLAIN(16)
#undef WB_PLAIN

void __tsan_read_range(void* a, unsigned long n) { plain(a, n, Access::read, WB_PC); }
void __tsan_write_range(void* a, unsigned long n) { plain(a, n, Access::write, WB_PC); }

void* __tsan_memcpy(void* dst, const void* src, std::size_t n) {
  plain(src, n, Access::read, WB_PC);
  plain(dst, n, Access::write, WB_PC);
  return std::memcpy(dst, src, n);
}
void* __tsan_memmove(void* dst, const void* src, std::size_t n) {
  plain(src, n, Access::read, WB_PC);
  plain(dst, n, Access::write, WB_PC);
  return std::memmove(dst, src, n);
}
void* __tsan_memset(void* dst, int c, std::size_t n) {
  plain(dst, n, Access::write, WB_PC);
  return std::memset(dst, c, n);
}

// __threadfence and __threadfence_block alike (the shim gives both this fence): the
// race check across blocks counts it as the device-wide one.
void __tsan_atomic_thread_fence(int) {
  __atomic_thread_fence(kOrder);
  if (in_kernel()) wb::emu::internal::on_fence();
}
void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(kOrder); }

#define WB_RMW(n, T, op, builtin, result)                                                                \
  T __tsan_atomic##n##_##op(volatile T* a, T v, int) {                                                  \
    if (in_kernel()) wb::emu::internal::lock_atomics();                                                  \
    const T old = builtin(a, v, kOrder);                                                                 \
    modified(a, old, T(result), WB_PC);                                                                  \
    return old;                                                                                          \
  }
#define WB_ATOMICS(n, T)                                                                                 \
  T __tsan_atomic##n##_load(const volatile T* a, int) { return atomic_load(a, WB_PC); }                 \
  void __tsan_atomic##n##_store(volatile T* a, T v, int) { atomic_store(a, v, WB_PC); }                 \
  WB_RMW(n, T, exchange, __atomic_exchange_n, v)                                                         \
  WB_RMW(n, T, fetch_add, __atomic_fetch_add, old + v)                                                   \
  WB_RMW(n, T, fetch_sub, __atomic_fetch_sub, old - v)                                                   \
  WB_RMW(n, T, fetch_and, __atomic_fetch_and, old & v)                                                   \
  WB_RMW(n, T, fetch_or, __atomic_fetch_or, old | v)                                                     \
  WB_RMW(n, T, fetch_xor, __atomic_fetch_xor, old ^ v)                                                   \
  WB_RMW(n, T, fetch_nand, __atomic_fetch_nand, ~(old & v))                                              \
  int __tsan_atomic##n##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {                  \
    return atomic_cas(a, c, v, WB_PC);                                                                   \
  }                                                                                                      \
  int __tsan_atomic##n##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {                    \
    return atomic_cas(a, c, v, WB_PC);                                                                   \
  }                                                                                                      \
  T __tsan_atomic##n##_compare_exchange_val(volatile T* a, T c, T v, int, int) {                        \
    atomic_cas(a, &c, v, WB_PC);                                                                         \
    return c;                                                                                            \
  }
WB_ATOMICS(8, int8_t)
WB_ATOMICS(16, int16_t)
WB_ATOMICS(32, int32_t)
WB_ATOMICS(64, int64_t)
#undef WB_ATOMICS
#undef WB_RMW

}  // extern "C"
