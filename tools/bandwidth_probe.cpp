// bandwidth_probe: why the CPU copy ceiling of a sweep read lower than what adamw
// reaches (issue 27, item 8), one suspect at a time. Not run by ctest: it measures.
//
//   g++ -O3 -fopenmp -fno-math-errno -fno-trapping-math -I. tools/bandwidth_probe.cpp
//       workbench/runtime/cpu_memory_ceilings.cpp -o bandwidth_probe
//   bandwidth_probe [MiB per buffer, default 1024] [repetitions, default 5]
//
// (wb's CPU variants are built with -fno-math-errno: without it the sqrt of adamw's
// loop stays a scalar call and the loop is bound by arithmetic, not memory.)
//
// Each line is one way of moving memory, best of the repetitions, with its GB/s
// counted the way wb's byte models count (bytes the op must read plus write, never the
// read-for-ownership a store may cost the bus). The suspects:
//   1. first-touch page faults inside the timed copy (cold vs pre-faulted buffers);
//   2. one thread doing the work (1 thread vs the OpenMP team);
//   3. memcpy's store path (glibc memcpy vs a plain loop vs non-temporal stores);
//   4. the copy being the wrong model of the ops: adamw updates its arrays in place (the
//      lines it writes were just read, so no extra read for ownership), global_norm
//      only reads; a copy writes lines it never read.
#include <immintrin.h>  // SSE only: wb builds for baseline x86-64
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sys/mman.h>

#include "workbench/runtime/cpu_memory_ceilings.h"

namespace {

double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double best_of(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) best = std::min(best, seconds(f));
  return best;
}

// Fresh pages from the kernel (mmap), never touched: the first write faults each one.
float* fresh(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(2);
  }
  return static_cast<float*>(p);
}

void fault_in(float* p, std::size_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < std::int64_t(n); ++i) p[i] = float(i & 1023);
}

// The read, copy and update loops are wb's own (workbench/runtime/cpu_memory_ceilings.cpp, what
// the cpu backend's ceilings time); the rest are the alternatives they were chosen over.
// Free functions over __restrict pointers, as wb's variants are written (inside a lambda
// the captured pointers are reloaded and the loops stay scalar).
void copy_streaming(float* __restrict dst, const float* __restrict src, std::int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; i += 4) _mm_stream_ps(dst + i, _mm_load_ps(src + i));
  _mm_sfence();
}

void adamw_like(float* __restrict p, float* __restrict m, float* __restrict v, const float* __restrict g,
                std::int64_t n, int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = 0.9f * m[i] + 0.1f * gi, vi = 0.999f * v[i] + 0.001f * gi * gi;
    p[i] -= 1e-4f * mi / (std::sqrt(vi) + 1e-8f);
    m[i] = mi;
    v[i] = vi;
  }
}

void report(const char* what, int threads, double bytes_counted, double s) {
  std::printf("%-58s threads %d  %7.1f GB/s  (%.1f ms)\n", what, threads, bytes_counted / s * 1e-9, s * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  if (mib < 16 || reps < 1) {
    std::fprintf(stderr, "usage: bandwidth_probe [MiB per buffer >= 16] [repetitions >= 1]\n");
    return 2;
  }
  const std::size_t bytes = mib << 20, n = bytes / 4;
  const int team = omp_get_max_threads();
  std::printf("buffers of %zu MiB, best of %d, OpenMP team of %d\n", mib, reps, team);

  // 1. The sweep's copy as it was, timed cold: fresh destination pages fault inside the copy.
  {
    float* src = fresh(bytes);
    fault_in(src, n, team);
    float* dst = fresh(bytes);
    const double cold = seconds([&] {
#pragma omp parallel for num_threads(team) schedule(static)
      for (std::int64_t c = 0; c < 256; ++c)
        std::memcpy(reinterpret_cast<char*>(dst) + bytes / 256 * c, reinterpret_cast<char*>(src) + bytes / 256 * c,
                    bytes / 256);
    });
    report("memcpy, 256 chunks, destination cold (page faults)", team, 2.0 * bytes, cold);
    munmap(src, bytes);
    munmap(dst, bytes);
  }

  // Four arrays, staggered: the k-th starts k * (16 KiB + 256 B) into its mapping. At
  // equal offsets (mappings exactly `bytes` apart) the four streams fall into the same
  // cache sets: run this probe to see what that costs on the machine at hand.
  const std::size_t stagger = 16640;
  float* base[4];
  float* arr[4];
  for (int k = 0; k < 4; ++k) {
    base[k] = fresh(bytes + 4 * stagger);
    arr[k] = base[k] + k * stagger / 4;
    fault_in(arr[k], n, team);
  }
  float *a = arr[0], *b = arr[1], *c = arr[2], *d = arr[3];

  for (int threads : {1, team}) {
    if (threads == 1 && team == 1) continue;
    // 2/3. The same copy on warm pages: glibc memcpy in 256 chunks (the sweep's way).
    const double memcpy_s = best_of(reps, [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::int64_t k = 0; k < 256; ++k)
        std::memcpy(reinterpret_cast<char*>(b) + bytes / 256 * k, reinterpret_cast<char*>(a) + bytes / 256 * k,
                    bytes / 256);
    });
    report("memcpy, 256 chunks, warm", threads, 2.0 * bytes, memcpy_s);
    // A plain loop the compiler vectorises: ordinary stores (read for ownership).
    const double loop_s = best_of(reps, [&] { wb::stream_copy(b, a, std::int64_t(n), threads); });
    report("copy loop, ordinary stores, warm", threads, 2.0 * bytes, loop_s);
    // Non-temporal stores: no read for ownership of the destination.
    const double nt_s = best_of(reps, [&] { copy_streaming(b, a, std::int64_t(n), threads); });
    report("copy loop, non-temporal stores, warm", threads, 2.0 * bytes, nt_s);
    // 4. Read-only: global_norm's stream (a sum of squares).
    double sink = 0;
    const double read_s = best_of(reps, [&] { sink += wb::stream_sum_squares(a, std::int64_t(n), threads); });
    report("read only (sum of squares)", threads, 1.0 * bytes, read_s);
    // Read + write in place: x = x * s + 1 (the line written was just read).
    const double update_s = best_of(reps, [&] { wb::stream_update(a, std::int64_t(n), threads); });
    report("update in place (read + write one array)", threads, 2.0 * bytes, update_s);
    // adamw's pattern: read four arrays, write three of them back in place.
    // A quarter of each array, so that one run moves about as much as the copies do (a
    // long run is more often cut by other processes on a shared machine); four quarters
    // are still far larger than the last-level cache at the default size.
    const std::int64_t q = std::int64_t(n) / 4;
    const double adamw_s = best_of(reps, [&] { adamw_like(a, b, c, d, q, threads); });
    report("adamw pattern (read 4 arrays, write 3 in place)", threads, 7.0 * 4.0 * double(q), adamw_s);
    if (sink == 42) std::printf("\n");  // keeps the sum alive
  }
  for (float* p : base) munmap(p, bytes + 4 * stagger);
  return 0;
}
