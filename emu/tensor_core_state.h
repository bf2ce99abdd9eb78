#pragma once
// The emulator's side of the tensor-core instructions
// (emu/tensor_core_instructions.h): the checks that need the block's shared memory, a
// fault at a call site, and each thread's queue of asynchronous copies (cp.async).
// Defined in emu/tensor_core.cpp, on the scheduler's per-thread state
// (emu/internal.h). A header of its own, not emu.h, so that the variants that never
// issue these instructions do not depend on it.
//
// Called only inside a kernel. The queue is the emulator's bookkeeping, kept where
// ThreadSanitizer does not look (like the scheduler's); what the kernel's memory sees
// of a copy (the read of its source, the poison written at issue, the data landing at
// the wait) the caller does with ordinary, instrumented accesses.
#include <cstddef>
#include <cstdint>
#include <string>

#include "emu/emu.h"

namespace wb::emu {

// A sticky fault of the calling thread: "<check>: kernel k, block b, thread t: <what>
// at <file:line>".
[[noreturn]] void fault_at(Site site, int code, const char* check, const std::string& what);

// Whether [p, p + bytes) lies wholly inside one shared array of the calling thread's
// block or inside its dynamic shared memory.
bool in_shared_memory(const void* p, std::size_t bytes);
// The address in words for messages: "0x... (byte 40 of shared array 'tile', declared
// at file:line)", "... of dynamic shared memory", "... of a device buffer of N bytes".
std::string describe_address(const void* p);

// One copy issued and not yet landed: its destination, the bytes it will write there
// (the source as read at issue, zero-filled past src_bytes), where it was issued and
// the commit group it belongs to (the thread's count of commits at issue).
struct AsyncCopy {
  void* dst = nullptr;
  Site site{nullptr, 0};
  uint32_t bytes = 0;
  uint64_t group = 0;
  unsigned char data[16] = {};
};
// Copies one thread may have outstanding (the emulator's limit, not the hardware's: a
// thread that issues more without a wait faults, naming the limit).
constexpr int kMaxAsyncCopies = 64;

// Queues a copy of `bytes` (4, 8 or 16) bytes of `data` to `dst`.
void async_copy_issue(Site site, void* dst, const unsigned char* data, std::size_t bytes);
// cp.async.commit_group: the copies issued since the last commit form one group (an
// empty group when there are none, as in PTX).
void async_copy_commit();
// The oldest outstanding copy of the calling thread that a wait leaving `pending`
// committed groups outstanding must land (pending < 0: every copy, committed or not),
// taken off the queue into *out; false when there is none left to land.
bool async_copy_take(int pending, AsyncCopy* out);

}  // namespace wb::emu
