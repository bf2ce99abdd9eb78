#include "emu/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>

#if WB_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if WB_EMU_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace wb::emu::fiber {

std::size_t StackPool::stack_bytes() {
  static const std::size_t bytes = [] {
    // Kernels keep small register tiles on the stack; sanitizers need more room.
    std::size_t kib = (WB_EMU_ASAN || WB_EMU_TSAN) ? 256 : 64;
    if (const char* env = std::getenv("WB_EMU_STACK_KIB")) kib = std::max<long>(16, std::atol(env));
    return kib * 1024;
  }();
  return bytes;
}

namespace {

Stack map_stack() {
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  const std::size_t size = StackPool::stack_bytes();
  void* p = ::mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::mprotect(p, page, PROT_NONE);  // the guard page: stacks grow down into it
  return Stack{static_cast<char*>(p) + page, size};
}

void unmap_stack(const Stack& s) {
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  ::munmap(static_cast<char*>(s.base) - page, s.size + page);
}

}  // namespace

StackPool::~StackPool() {
  for (const Stack& s : stacks_) unmap_stack(s);
}

Stack StackPool::get(std::size_t i) {
  while (stacks_.size() <= i) stacks_.push_back(map_stack());
  return stacks_[i];
}

Stack StackPool::fresh(std::size_t i) {
  if (i >= stacks_.size()) return get(i);
  // The top of the stack, where a kernel's frames live, mapped anew in place (the
  // sanitizer's mmap interceptor forgets the range); the rest is rarely touched.
  const Stack& s = stacks_[i];
  const std::size_t top = std::min<std::size_t>(s.size, 16 * 1024);
  void* p = ::mmap(static_cast<char*>(s.top()) - top, top, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return s;
}

void before_switch(Sanitizer& from, const Sanitizer& to, const void* bottom, std::size_t size, bool finishing) {
#if WB_EMU_ASAN
  __sanitizer_start_switch_fiber(finishing ? nullptr : &from.asan_fake_stack, bottom, size);
#else
  (void)from, (void)bottom, (void)size, (void)finishing;
#endif
#if WB_EMU_TSAN
  __tsan_switch_to_fiber(to.tsan_fiber, __tsan_switch_to_fiber_no_sync);
#else
  (void)to;
#endif
}

void after_switch(Sanitizer& self, const void** bottom, std::size_t* size) {
#if WB_EMU_ASAN
  __sanitizer_finish_switch_fiber(self.asan_fake_stack, bottom, size);
#else
  (void)self, (void)bottom, (void)size;
#endif
}

void* create_tsan_fiber() {
#if WB_EMU_TSAN
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}

void destroy_tsan_fiber(void* f) {
#if WB_EMU_TSAN
  if (f) __tsan_destroy_fiber(f);
#else
  (void)f;
#endif
}

void* current_tsan_fiber() {
#if WB_EMU_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}

void release(void* sync_object) {
#if WB_EMU_TSAN
  __tsan_release(sync_object);
#else
  (void)sync_object;
#endif
}

void acquire(void* sync_object) {
#if WB_EMU_TSAN
  __tsan_acquire(sync_object);
#else
  (void)sync_object;
#endif
}

}  // namespace wb::emu::fiber
