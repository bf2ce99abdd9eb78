#pragma once
// The cpu backend's memory ceilings, measured the way the ops move memory: three streams
// over warm (pre-faulted) buffers, each the best of several passes by a given number of
// threads. Counted as the ops' byte models count: bytes read plus bytes written.
//   read:   a sum of squares over one buffer (global_norm's pattern)
//   copy:   one buffer into another with ordinary stores (an op writing a fresh output)
//   update: x = x * a + b in place (adamw's pattern: the lines written were just read)
// Why each precaution (tools/bandwidth_probe.cpp measures each one on the machine at hand;
// the ratios below are from a 2-vCPU EPYC VM):
//   - pre-faulted: a first touch inside a timed pass costs a page fault per 4 KiB page
//     (a cold memcpy ran five to ten times slower than a warm one); the first touch is
//     also done by the measuring threads with the same static schedule, so that on a NUMA
//     machine each thread's pages are local to it, as they are for a variant's arrays;
//   - staggered: the destination starts 16 KiB + 256 B past the source's alignment (at
//     equal offsets in equal-sized mappings the streams compete for the same cache sets:
//     the probe's adamw pattern ran ten times slower there than staggered);
//   - not memcpy: glibc picks its store path (ordinary or non-temporal) from cache sizes
//     it reads from CPUID, which a VM may report oddly; a plain loop is what variants do.
#include <cstddef>
#include <cstdint>
#include <optional>

namespace wb {

struct HostStreams {
  std::size_t bytes = 0;  // per buffer
  int threads = 0;
  int repetitions = 0;
  double read_gbps = 0, copy_gbps = 0, update_gbps = 0;
  long faults_while_timed = 0;  // page faults of this process during the timed passes
};

// The three streams' loops, shared with tools/bandwidth_probe.cpp (which measures them
// beside the alternatives): n a multiple of 16, pointers 16-byte aligned.
float stream_sum_squares(const float* x, std::ptrdiff_t n, int threads);
void stream_copy(float* dst, const float* src, std::ptrdiff_t n, int threads);
void stream_update(float* x, std::ptrdiff_t n, int threads);

// bytes: per buffer (two buffers are allocated), rounded down to 64 floats; threads >= 1;
// repetitions >= 1 timed passes per stream after one untimed warm-up pass.
HostStreams measure_host_streams(std::size_t bytes, int threads, int repetitions);

// The last-level cache of the CPUs this process may run on, in bytes: the sum of the
// highest-level caches of the distinct cache instances (sysfs), since that is what the
// threads can hold between them; where sysfs says nothing (a microVM), CPUID's L3 on AMD
// (amd_cpuid_l3_bytes: unknown for a Zen, whose core complex's slice only leaf 0x8000001D
// gives), else sysconf's L3 or L2.
// 0: unknown (ceilings then stream over 256 MiB, the CPU flush writes 256 MiB, and no
// record is flagged above the ceiling).
std::size_t host_llc_bytes();

// The L3 that EDX of AMD's CPUID leaf 0x80000006 describes (AMD APM vol. 3, CPUID
// Fn8000_0006_EDX): L3Size, bits 31:18, in units of 512 KiB, and L3Assoc, bits 15:12.
// L3Assoc 9h says the L3's figures are those of leaf 0x8000001D (a Zen core complex's
// slice: 32 MiB); L3Size is then not the slice the threads here share (a Zen 5 VM that
// offers no leaf 0x8000001D reports hundreds of MiB there, which glibc's sysconf passes
// on): 0, unknown. L3Assoc 0h is a disabled L3: nullopt,
// the last level is the L2. Any other associativity: L3Size.
std::optional<std::size_t> amd_cpuid_l3_bytes(std::uint32_t edx);

}  // namespace wb
