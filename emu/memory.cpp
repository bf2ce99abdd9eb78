// The emulator's memory (emu/emu.h: device_malloc, shared_array, ...): the context
// that holds the device buffers and the sticky error, the canaries around every
// buffer and shared array, the guard pages around device buffers with the signal
// handler that catches a kernel's access to one, and the reports of a fault in memory
// (memcheck).
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <stdexcept>

#include "emu/host_access.h"
#include "emu/internal.h"
#include "emu/symbols.h"

namespace wb::emu::internal {
namespace {

// ---------------------------------------------------------------------------------
// Canaries and poison

// Fills without calling memset, so that ThreadSanitizer's interceptors do not record
// the emulator's own writes as a fiber's.
WB_EMU_NO_TSAN void fill(void* p, unsigned char value, std::size_t n) {
  volatile unsigned char* q = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) q[i] = value;
}

WB_EMU_NO_TSAN void fill_canary(void* p, std::size_t n) {
  volatile unsigned char* q = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) q[i] = canary_byte(static_cast<char*>(p) + i);
}

WB_EMU_NO_TSAN void free_after_block(Block& b, char* p) {
  if (!WB_EMU_TSAN) {
    std::free(p);
    return;
  }
  std::lock_guard<std::mutex> lock(b.launch->deferred_mutex);
  b.launch->deferred_frees.push_back(p);
}

// ---------------------------------------------------------------------------------
// Guard pages

struct sigaction previous_segv;

// A fault of kernel code on a guard page (or its stack's): recorded for the block, and
// back to the block's scheduler, the thread abandoned as a fault abandons it on a GPU.
// Any other SIGSEGV gets the disposition it had before the emulator's.
void on_segv(int, siginfo_t* info, void* uc) {
  Worker* w = tls_worker;
  if (!w || !w->current || !w->block || w->block->memory_fault) {
    ::sigaction(SIGSEGV, &previous_segv, nullptr);
    return;  // the access faults again, as if the emulator had not been here
  }
  Block& b = *w->block;
  b.memory_fault = true;
  b.faulted = true;
  b.fault_address = info->si_addr;
  b.fault_pc = w->current->checking_pc
                   ? w->current->checking_pc
                   : reinterpret_cast<const void*>(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP] + 1);
  b.fault_thread = w->current;
  boost::context::detail::jump_fcontext(w->scheduler, nullptr);
}

}  // namespace

// ---------------------------------------------------------------------------------
// The context

Context& context() {
  static Context c;
  return c;
}

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &previous_segv);
  });
}

void set_sticky(int code, const std::string& message) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.sticky == kSuccess) {
    c.sticky = code;
    c.sticky_message = message;
  }
  c.last = code;
}

// ---------------------------------------------------------------------------------
// Shared memory and the reports of a fault in memory

char* allocate_with_canaries(std::size_t bytes, std::size_t canary, std::size_t align, char** raw) {
  if (WB_EMU_ASAN) canary = 0;  // exact size: ASan's redzones catch what canaries would
  void* p = nullptr;
  if (::posix_memalign(&p, std::max<std::size_t>(align, 16), bytes + 2 * canary + (bytes == 0 ? 1 : 0)) != 0)
    throw std::bad_alloc();
  *raw = static_cast<char*>(p);
  char* data = *raw + canary;
  fill_canary(*raw, canary);
  fill(data, kPoisonByte, bytes);
  fill_canary(data + bytes, canary);
  return data;
}

WB_EMU_NO_TSAN void release_shared(Block& b) {
  for (int i = 0; i < b.shared_count; ++i) {
    SharedArray& s = b.shared[i];
    if (!b.faulted && !WB_EMU_ASAN &&
        (!canary_intact(s.raw, kSharedCanary) || !canary_intact(s.data + s.bytes, kSharedCanary))) {
      const bool before = !canary_intact(s.raw, kSharedCanary);
      b.faulted = true;
      b.fault = Fault{kIllegalAddress, "memcheck: " + where(b, nullptr) + ": a write " +
                                           (before ? "before the start" : "past the end") + " of shared array '" +
                                           s.decl->name + "' (" + std::to_string(s.bytes) + " bytes, declared at " +
                                           site_text(Site{s.decl->file, s.decl->line}) + ")"};
    }
    free_after_block(b, s.raw);
  }
  b.shared_count = 0;
  if (b.dynamic_raw) {
    const std::size_t bytes = b.launch->spec->dynamic_shared;
    if (!b.faulted && !WB_EMU_ASAN &&
        (!canary_intact(b.dynamic_raw, kSharedCanary) || !canary_intact(b.dynamic + bytes, kSharedCanary))) {
      b.faulted = true;
      b.fault = Fault{kIllegalAddress, "memcheck: " + where(b, nullptr) + ": a write outside the " +
                                           std::to_string(bytes) + " bytes of dynamic shared memory"};
    }
    free_after_block(b, b.dynamic_raw);
    b.dynamic_raw = b.dynamic = nullptr;
  }
}

// What the address is to the kernel: a shared array of the block, its dynamic shared
// memory, or a device buffer.
WB_EMU_NO_TSAN std::string describe_address(const Block& b, const void* address) {
  const char* a = static_cast<const char*>(address);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", address);
  for (int i = 0; i < b.shared_count; ++i) {
    const SharedArray& s = b.shared[i];
    if (a >= s.data && a < s.data + s.bytes)
      return std::string(hex) + " (byte " + std::to_string(a - s.data) + " of shared array '" + s.decl->name +
             "', declared at " + site_text(Site{s.decl->file, s.decl->line}) + ")";
  }
  const std::size_t dynamic = b.launch->spec->dynamic_shared;
  if (b.dynamic && a >= b.dynamic && a < b.dynamic + dynamic)
    return std::string(hex) + " (byte " + std::to_string(a - b.dynamic) + " of dynamic shared memory)";
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.allocations.upper_bound(reinterpret_cast<std::uintptr_t>(address));
  if (it != c.allocations.begin()) {
    --it;
    const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(address) - it->first;
    if (offset < it->second.bytes)
      return std::string(hex) + " (byte " + std::to_string(offset) + " of a device buffer of " +
             std::to_string(it->second.bytes) + " bytes)";
  }
  return hex;
}

namespace {

// Where `at` lies against [data, data + bytes) with canaries [front, data) and
// [data + bytes, back): "N bytes before the start of " / "N bytes past the end of ",
// or "" when in neither canary.
std::string in_canary(const char* at, const char* front, const char* data, std::size_t bytes, const char* back) {
  if (at >= front && at < data) return std::to_string(data - at) + " bytes before the start of ";
  if (at >= data + bytes && at < back) return std::to_string(at - (data + bytes)) + " bytes past the end of ";
  return "";
}

}  // namespace

WB_EMU_NO_TSAN std::string canary_where(const Block& b, const void* address, std::size_t bytes) {
  const char* first = static_cast<const char*>(address);
  const char* last = first + bytes - 1;
  for (const char* at : {first, last}) {
    for (int i = 0; i < b.shared_count; ++i) {
      const SharedArray& s = b.shared[i];
      const std::string where = in_canary(at, s.raw, s.data, s.bytes, s.data + s.bytes + kSharedCanary);
      if (!where.empty())
        return where + "shared array '" + s.decl->name + "', declared at " +
               site_text(Site{s.decl->file, s.decl->line});
    }
    const std::size_t dynamic = b.launch->spec->dynamic_shared;
    if (b.dynamic) {
      const std::string where = in_canary(at, b.dynamic_raw, b.dynamic, dynamic, b.dynamic + dynamic + kSharedCanary);
      if (!where.empty()) return where + "the block's dynamic shared memory (" + std::to_string(dynamic) + " bytes)";
    }
    Context& c = context();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto next = c.allocations.upper_bound(reinterpret_cast<std::uintptr_t>(at));
    for (auto it : {next, next == c.allocations.begin() ? c.allocations.end() : std::prev(next)}) {
      if (it == c.allocations.end()) continue;
      const Allocation& a = it->second;
      const std::string where = in_canary(at, a.front, reinterpret_cast<const char*>(it->first), a.bytes, a.back);
      if (!where.empty()) return where + "a device buffer of " + std::to_string(a.bytes) + " bytes";
    }
  }
  return "";
}

// The access to a guard page that the fault handler caught, in words.
std::string memory_fault_message(const Block& b) {
  const auto address = reinterpret_cast<std::uintptr_t>(b.fault_address);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", b.fault_address);
  std::string what = std::string("an access at ") + hex;
  const Thread& t = *b.fault_thread;
  const auto stack = reinterpret_cast<std::uintptr_t>(t.stack.base);
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  if (address < stack && address + page >= stack) {
    what = "the thread's stack overflowed (" + std::to_string(t.stack.size / 1024) +
           " KiB; WB_EMU_STACK_KIB sets it)";
  } else {
    Context& c = context();
    std::lock_guard<std::mutex> lock(c.mutex);
    bool found = false;
    for (const auto& [data, a] : c.allocations) {
      const auto raw = reinterpret_cast<std::uintptr_t>(a.raw);
      if (!a.raw_bytes || address < raw || address >= raw + a.raw_bytes) continue;
      what += address < data ? ", " + std::to_string(data - address) + " bytes before the start"
                             : ", " + std::to_string(address - data - a.bytes) + " bytes past the end";
      what += " of a device buffer of " + std::to_string(a.bytes) + " bytes (in the guard region around it)";
      found = true;
      break;
    }
    if (!found) what += ", outside every device buffer";
  }
  return "memcheck: " + where(b, &t) + ": " + what + ", in " + code_location(b.fault_pc);
}

// Checks the canaries of every device buffer after a launch.
std::string device_canaries(const std::string& kernel) {
  if (WB_EMU_ASAN) return "";
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [address, a] : c.allocations) {
    char* data = reinterpret_cast<char*>(address);
    const bool before = !canary_intact(a.front, std::size_t(data - a.front));
    const bool after = !canary_intact(data + a.bytes, std::size_t(a.back - (data + a.bytes)));
    if (before || after) {
      fill_canary(a.front, std::size_t(data - a.front));
      fill_canary(data + a.bytes, std::size_t(a.back - (data + a.bytes)));
      return "memcheck: kernel " + kernel + " wrote " + (before ? "before the start" : "past the end") +
             " of a device buffer of " + std::to_string(a.bytes) + " bytes";
    }
  }
  return "";
}

}  // namespace wb::emu::internal

namespace wb::emu {
using namespace internal;

// ---------------------------------------------------------------------------------
// Device memory, alignment and shared arrays, as the kernels and the runtime see them

void* device_malloc(std::size_t bytes) {
  refuse_in_capture("a device allocation", "a captured step may not allocate");
  Allocation a{nullptr, bytes};
  char* data = nullptr;
  if (kGuardPages) {
    // [guard][front canary, data (256-byte aligned, as cudaMalloc's), back canary][guard]
    install_fault_handler();
    const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
    const std::size_t region = (bytes + 3 * kCanary + page - 1) / page * page;
    a.raw_bytes = region + 2 * kGuardBytes;
    void* map = ::mmap(nullptr, a.raw_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) throw std::bad_alloc();
    a.raw = static_cast<char*>(map);
    char* start = a.raw + kGuardBytes;
    if (::mprotect(start, region, PROT_READ | PROT_WRITE) != 0) {
      ::munmap(map, a.raw_bytes);
      throw std::bad_alloc();
    }
    a.back = start + region;
    data = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(a.back - kCanary - bytes)) & ~std::uintptr_t(255));
    a.front = start;
    fill_canary(a.front, std::size_t(data - a.front));
    fill(data, kPoisonByte, bytes);
    fill_canary(data + bytes, std::size_t(a.back - (data + bytes)));
  } else {
    data = allocate_with_canaries(bytes, kCanary, 256, &a.raw);
    a.front = data - (WB_EMU_ASAN ? 0 : kCanary);
    a.back = data + bytes + (WB_EMU_ASAN ? 0 : kCanary);
  }
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.allocations[reinterpret_cast<std::uintptr_t>(data)] = a;
  return data;
}

void device_free(void* p) noexcept {
  if (!p) return;
  abandon_capture("a device free", "a captured step may not free device memory (cudaFree synchronises the device)");
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == c.allocations.end()) return;
  if (it->second.raw_bytes)
    ::munmap(it->second.raw, it->second.raw_bytes);
  else
    std::free(it->second.raw);
  c.allocations.erase(it);
}

bool in_device_memory(const void* p, std::size_t bytes) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto it = c.allocations.upper_bound(address);
  if (it == c.allocations.begin()) return false;
  --it;
  return address >= it->first && address + bytes <= it->first + it->second.bytes;
}

std::size_t device_bytes_from(const void* p) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto it = c.allocations.upper_bound(address);
  if (it == c.allocations.begin()) return 0;
  --it;
  const std::uintptr_t end = it->first + it->second.bytes;
  return address >= it->first && address < end ? end - address : 0;
}

int device_memset(void* p, int value, std::size_t bytes) {
  if (planning()) return kSuccess;
  if (const int sticky = sticky_error()) return sticky;
  if (bytes == 0) return kSuccess;
  if (!in_device_memory(p, bytes)) {
    set_sticky(kIllegalAddress,
               "memcheck: cudaMemsetAsync of " + std::to_string(bytes) + " bytes outside every device buffer");
    return kIllegalAddress;
  }
  // In a capture: checked now, and again when replayed (the buffer may be gone).
  if (record("cudaMemsetAsync of " + std::to_string(bytes) + " bytes",
             [p, value, bytes] { return device_memset(p, value, bytes); }))
    return kSuccess;
  std::memset(p, value, bytes);
  return kSuccess;
}

int device_memcpy(void* dst, const void* src, std::size_t bytes, CopyKind kind, const char* call, bool synchronous) {
  if (planning()) return kSuccess;
  if (kind == CopyKind::by_address)
    kind = in_device_memory(src, 1) ? (in_device_memory(dst, 1) ? CopyKind::device_to_device : CopyKind::device_to_host)
                                    : (in_device_memory(dst, 1) ? CopyKind::host_to_device : CopyKind::host_to_host);
  if (capturing()) {
    switch (kind) {
      case CopyKind::device_to_host:
        refuse_in_capture(call, "a device-to-host copy: a captured step may not copy to the host (reading the result "
                                "needs a synchronisation after the replay)");
        break;
      case CopyKind::host_to_device:
        refuse_in_capture(call, "a host-to-device copy from pageable host memory: a graph's memcpy node reads the host "
                                "buffer when the graph is replayed, not when it was captured (upload before the "
                                "capture, or from a buffer that stays put)");
        break;
      case CopyKind::host_to_host:
        refuse_in_capture(call, "a host-to-host copy: not a stream operation a graph can hold");
        break;
      default:
        if (synchronous)
          refuse_in_capture(call, "cudaMemcpy runs on the legacy default stream, which a capture may not touch (use "
                                  "cudaMemcpyAsync on the captured stream)");
        break;
    }
  }
  if (const int sticky = sticky_error()) return sticky;
  if (bytes == 0) return kSuccess;
  const bool src_device = kind == CopyKind::device_to_host || kind == CopyKind::device_to_device;
  const bool dst_device = kind == CopyKind::host_to_device || kind == CopyKind::device_to_device;
  if ((src_device && !in_device_memory(src, bytes)) || (dst_device && !in_device_memory(dst, bytes))) {
    set_sticky(kIllegalAddress, std::string("memcheck: ") + call + " of " + std::to_string(bytes) + " bytes " +
                                    (src_device && !in_device_memory(src, bytes) ? "from" : "to") +
                                    " outside every device buffer");
    return kIllegalAddress;
  }
  if (record(std::string(call) + " of " + std::to_string(bytes) + " bytes, device to device",
             [dst, src, bytes, kind, call] { return device_memcpy(dst, src, bytes, kind, call, false); }))
    return kSuccess;
  std::memmove(dst, src, bytes);
  return kSuccess;
}

void check_aligned(const void* p, std::size_t bytes) {
  // The shim's access functions (__ldcs, __stcs, __ldg) are inlined into the kernel, so
  // the return address is the accessing line, which the message names (not the launch's).
  const void* pc = __builtin_return_address(0);
  if (Worker* w = tls_worker; w && w->current && w->block && w->block->counters)
    announce_vector(*w->block, *w->current, p, bytes, pc);
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address % bytes == 0) return;
  char text[32];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(address));
  raise(kMisalignedAddress, "memcheck",
        "a " + std::to_string(bytes) + "-byte access at " + text + ", which is not " + std::to_string(bytes) +
            "-byte aligned, in " + access_site(pc));
}

WB_EMU_NO_TSAN void* shared_array(const SharedDecl& decl, std::size_t bytes, std::size_t align) {
  Worker& w = *tls_worker;
  Block& b = *w.block;
  for (int i = 0; i < b.shared_count; ++i) {
    if (b.shared[i].decl == &decl) {
      fiber::acquire(&b.syncs->shared);
      return b.shared[i].data;
    }
  }
  if (b.shared_count == Block::kMaxSharedArrays)
    raise(kLaunchFailure, "launch", "more than " + std::to_string(Block::kMaxSharedArrays) + " shared arrays");
  b.static_shared += bytes;
  const Target& t = target();
  if (b.static_shared > t.static_shared_per_block)
    raise(kLaunchFailure, "launch",
          "static shared memory reaches " + std::to_string(b.static_shared) + " bytes with '" + decl.name +
              "', more than the 48 KiB a kernel may declare statically (the compiler would refuse it)");
  if (b.static_shared + b.launch->spec->dynamic_shared > b.launch->shared_limit && b.launch->spec->dynamic_shared > 0)
    raise(kLaunchFailure, "launch",
          "static (" + std::to_string(b.static_shared) + ") plus dynamic (" +
              std::to_string(b.launch->spec->dynamic_shared) + ") shared memory exceed the block's " +
              std::to_string(b.launch->shared_limit) + " bytes");
  SharedArray s{&decl, nullptr, nullptr, bytes};
  s.data = allocate_with_canaries(bytes, kSharedCanary, std::max<std::size_t>(align, 16), &s.raw);
  b.shared[b.shared_count++] = s;
  fiber::release(&b.syncs->shared);
  return s.data;
}

void* dynamic_shared() { return tls_worker->block->dynamic; }

}  // namespace wb::emu
