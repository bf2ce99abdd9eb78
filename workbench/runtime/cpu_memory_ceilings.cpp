#include "workbench/runtime/cpu_memory_ceilings.h"

#include <omp.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <string>

namespace wb {
namespace {

long page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt + u.ru_majflt;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

// Sixteen partial sums (four SSE accumulators), so that the add's latency does not cap
// the stream below the memory's rate; n is a multiple of 16.
float stream_sum_squares(const float* __restrict x, std::ptrdiff_t n, int threads) {
  float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    float part[16] = {};
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; i += 16)
      for (int j = 0; j < 16; ++j) part[j] += x[i + j] * x[i + j];
    for (float p : part) total += p;
  }
  return total;
}

void stream_copy(float* __restrict dst, const float* __restrict src, std::ptrdiff_t n, int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

void stream_update(float* __restrict x, std::ptrdiff_t n, int threads) {
  // Converges to 2: no overflow or denormals however many passes run.
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] * 0.5f + 1.0f;
}

HostStreams measure_host_streams(std::size_t bytes, int threads, int repetitions) {
  HostStreams h;
  h.threads = std::max(1, threads);
  h.repetitions = std::max(1, repetitions);
  const std::int64_t n = std::int64_t(bytes / 4 / 64 * 64);
  h.bytes = std::size_t(n) * 4;
  const std::size_t stagger = 16640;  // 16 KiB + 256 B, a multiple of 64
  const std::size_t total = 2 * h.bytes + stagger;
  float* block = static_cast<float*>(std::aligned_alloc(64, (total + 63) / 64 * 64));
  if (!block) throw std::bad_alloc();
  float* src = block;
  float* dst = block + (h.bytes + stagger) / 4;
  // The first touch, by the measuring threads in the timed loops' static schedule.
#pragma omp parallel for simd num_threads(h.threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    src[i] = float(i & 1023) * (1.0f / 1024);
    dst[i] = 0;
  }
  auto best = [&](const std::function<void()>& pass) {
    pass();  // warm-up: caches, the OpenMP team, the loop's code
    double fastest = 1e30;
    for (int r = 0; r < h.repetitions; ++r) {
      const long faults = page_faults();
      const auto t0 = std::chrono::steady_clock::now();
      pass();
      fastest = std::min(fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      h.faults_while_timed += page_faults() - faults;
    }
    return fastest;
  };
  volatile float sink = 0;  // keeps the sums alive
  const double b = double(h.bytes);
  h.read_gbps = b / best([&] { sink = sink + stream_sum_squares(src, n, h.threads); }) * 1e-9;
  h.copy_gbps = 2 * b / best([&] { stream_copy(dst, src, n, h.threads); }) * 1e-9;
  h.update_gbps = 2 * b / best([&] { stream_update(dst, n, h.threads); }) * 1e-9;
  std::free(block);
  return h;
}

std::optional<std::size_t> amd_cpuid_l3_bytes(std::uint32_t edx) {
  const unsigned associativity = (edx >> 12) & 0xF;
  if (associativity == 0) return std::nullopt;
  if (associativity == 9) return 0;
  return std::size_t(edx >> 18) * (std::size_t(512) << 10);
}

std::size_t host_llc_bytes() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) CPU_ZERO(&allowed);
  int top_level = 0;
  std::map<std::string, std::size_t> instances;  // shared_cpu_list -> size, of the top level
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    for (int index = 0; index < 16; ++index) {
      const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index);
      const std::string level = read_line(dir + "/level"), type = read_line(dir + "/type"), size = read_line(dir + "/size");
      if (level.empty()) break;
      if (type == "Instruction" || size.empty()) continue;
      const int l = std::atoi(level.c_str());
      std::size_t kib = std::strtoull(size.c_str(), nullptr, 10);
      if (size.back() == 'M') kib *= 1024;
      if (l > top_level) {
        top_level = l;
        instances.clear();
      }
      if (l == top_level) instances[read_line(dir + "/shared_cpu_list")] = kib * 1024;
    }
  }
  std::size_t sum = 0;
  for (const auto& [cpus, bytes] : instances) sum += bytes;
  if (sum > 0) return sum;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  // The vendor string "AuthenticAMD" in EBX, EDX, ECX of leaf 0.
  const bool amd = __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;
  if (amd && __get_cpuid_max(0x80000000, nullptr) >= 0x80000006 && __get_cpuid(0x80000006, &a, &b, &c, &d))
    if (const std::optional<std::size_t> l3 = amd_cpuid_l3_bytes(d)) return *l3;
#endif
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return llc > 0 ? std::size_t(llc) : 0;
}

}  // namespace wb
