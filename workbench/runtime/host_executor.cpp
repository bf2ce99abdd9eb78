// The cpu backend: host memory, the calling thread (and its OpenMP team).
#include <cblas.h>
#include <omp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/bf16.h"
#include "base/cpu_isa.h"
#include "base/errors.h"
#include "device/cpu/onednn.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/cpu_memory_ceilings.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

class HostExecutor final : public Executor {
 public:
  HostExecutor() {
    info_.backend = Backend::cpu;
    info_.name = cpu_model();
    info_.slug = "cpu-" + slugify(info_.name);
    if (cpu::isa().x86_64) {
      info_.isa = std::string(cpu::to_string(cpu::isa().level));
      info_.slug += "-" + info_.isa;
    }
    // info_.cpu stays empty: filling it asks oneDNN (host_cpu_capabilities, context.h),
    // which a run that never calls a oneDNN rung (the fp32 trainer) has no reason to wake.
    struct utsname machine {};
    info_.architecture = uname(&machine) == 0 ? machine.machine : "";
    info_.multiprocessors = int(std::thread::hardware_concurrency());
    info_.memory_bytes = host_memory_bytes();
    info_.l2_bytes = int64_t(host_llc_bytes());
  }

  Backend backend() const override { return Backend::cpu; }
  const DeviceInfo& device() const override { return info_; }
  ExecContext* context() override { return &ctx_; }

  void* allocate(std::size_t bytes) override {
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void release(void* p) noexcept override { std::free(p); }
  void to_device(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void to_host(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void poison(void* dst, std::size_t bytes) override { std::memset(dst, 0xFF, bytes); }
  void zero(void* dst, std::size_t bytes) override { std::memset(dst, 0, bytes); }
  void synchronize() override {}
  // Writes twice the last-level cache (8 to 256 MiB; 256 MiB when its size is unknown)
  // from every thread, so that no core's caches keep the op's inputs.
  void flush_cache() override {
    if (flush_.empty()) flush_.assign(flush_bytes(), 0);
    const std::int64_t chunks = 64, chunk = std::int64_t(flush_.size()) / chunks;
    ++flush_value_;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < chunks; ++i) std::memset(flush_.data() + i * chunk, flush_value_, std::size_t(chunk));
  }
  std::size_t flush_bytes() const override {
    const std::size_t most = std::size_t(256) << 20;
    if (info_.l2_bytes <= 0) return most;
    return std::clamp<std::size_t>(2 * std::size_t(info_.l2_bytes), std::size_t(8) << 20, most) / 64 * 64;
  }

  double time_launch(const std::function<void()>& launch) override {
    const auto start = std::chrono::steady_clock::now();
    launch();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  Ceilings measure_ceilings() override {
    Ceilings c;
    // Memory: read, copy and update-in-place streams (cpu_memory_ceilings.h says why each and
    // how), over buffers of eight times the last-level cache, between 256 MiB and 1 GiB
    // (256 MiB when its size is unknown; at most a sixteenth of the memory each), by the variants' default thread count
    // (cpu::threads_param: the OpenMP maximum), the best of five passes each.
    const std::size_t llc = std::size_t(std::max<int64_t>(info_.l2_bytes, 0));
    std::size_t bytes = std::clamp<std::size_t>(8 * llc, std::size_t(256) << 20, std::size_t(1) << 30);
    if (info_.memory_bytes > 0) bytes = std::min(bytes, std::size_t(info_.memory_bytes) / 16);
    const int threads = std::max(1, omp_get_max_threads());
    const HostStreams s = measure_host_streams(bytes, threads, 5);
    c.copy_gbps = s.copy_gbps;
    c.read_gbps = s.read_gbps;
    c.update_gbps = s.update_gbps;
    c.memory_gbps = std::max({s.read_gbps, s.copy_gbps, s.update_gbps});
    c.stream_bytes = int64_t(s.bytes);
    c.threads = threads;
    measure_matmul(c, NumericClass::bf16);
    c.method =
        "memory: the fastest of a read, a copy and an in-place update stream over pre-faulted, staggered "
        "buffers of " +
        std::to_string(s.bytes >> 20) + " MiB (last-level cache " +
        (llc > 0 ? std::to_string(llc >> 20) + " MiB" : std::string("unknown")) + ") by " + std::to_string(threads) +
        " threads, bytes read plus written, best of 5 each after a warm-up (" + std::to_string(s.faults_while_timed) +
        " page faults while timed); matrix: " + c.method;
    return c;
  }

  Ceilings measure_matmul_ceiling(NumericClass numeric) override {
    Ceilings c;
    measure_matmul(c, numeric);
    c.method = "matrix: " + c.method;
    return c;
  }

 private:
  static constexpr int kGemmN = 1024;

  // The best of five OpenBLAS sgemms of n x n matrices (after one warm-up).
  double sgemm_seconds(int n) {
    std::vector<float> a(std::size_t(n) * n, 0.5f), b(std::size_t(n) * n, 0.25f), out(std::size_t(n) * n);
    auto gemm = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, out.data(),
                  n);
    };
    gemm();
    double best = 1e30;
    for (int i = 0; i < 5; ++i) best = std::min(best, time_launch(gemm));
    return best;
  }

  // The best of five oneDNN bf16 matmuls of n x n matrices (after one to build it).
  double onednn_bf16_gemm_seconds(int n) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    cpu::OneDnn& d = cpu::onednn();
    const dnnl::memory::desc md({n, n}, dt::bf16, tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(md, md, md), d.engine);
    const dnnl::matmul gemm(pd);
    std::vector<bf16> a(std::size_t(n) * n, to_bf16(0.5f)), b(std::size_t(n) * n, to_bf16(0.25f)),
        out(std::size_t(n) * n);
    dnnl::memory am(md, d.engine, a.data()), bm(md, d.engine, b.data()), om(md, d.engine, out.data());
    auto run = [&] {
      gemm.execute(d.stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, om}});
      d.stream.wait();
    };
    run();
    double best = 1e30;
    for (int i = 0; i < 5; ++i) best = std::min(best, time_launch(run));
    return best;
  }

  // Into c: fp32's matrix ceiling (OpenBLAS sgemm, n = 1024, the best of five), and the
  // ceiling of `numeric` where it is another class: bf16 is oneDNN's bf16 matmul at the
  // same n (fp32 accumulation, bf16 out; the library of the CPU bf16 matmul rungs),
  // absent where oneDNN makes none for this CPU; tf32 is absent on every CPU. c.method
  // says what was measured.
  void measure_matmul(Ceilings& c, NumericClass numeric) {
    const double flops = 2.0 * kGemmN * double(kGemmN) * kGemmN;
    c.fp32_tflops = flops / sgemm_seconds(kGemmN) * 1e-12;
    c.method = "OpenBLAS sgemm n=1024";
    if (numeric == NumericClass::bf16) {
      auto absent = [&](const std::string& why) {
        c.absent[matmul_field(NumericClass::bf16)] =
            "no bf16 GEMM ceiling: " + why + "; bf16 work is taken against the fp32 ceiling";
      };
      if (const auto& missing = cpu::onednn_info().bf16_matmul_missing) {
        absent("the bf16 matmul rungs' library " + *missing);
      } else {
        // What oneDNN refuses or fails at here (onednn_call: Unsupported or
        // BackendError) is an absent ceiling, not the sweep's end.
        try {
          double seconds = 0;
          cpu::onednn_call("bf16 matmul (the ceiling)", [&] { seconds = onednn_bf16_gemm_seconds(kGemmN); });
          c.bf16_tflops = flops / seconds * 1e-12;
          c.method += " and oneDNN bf16 matmul n=1024";
        } catch (const Unsupported& e) {
          absent(e.what());
        } catch (const BackendError& e) {
          absent(e.what());
        }
      }
    }
    c.method += ", best of 5 each";
    c.absent[matmul_field(NumericClass::tf32)] = "no tf32 on a CPU: tf32 variants are CUDA's";
  }

  DeviceInfo info_;
  ExecContext ctx_;
  std::vector<char> flush_;  // allocated at the first flush
  unsigned char flush_value_ = 0;
};

}  // namespace

int64_t host_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

std::unique_ptr<Executor> make_host_executor() { return std::make_unique<HostExecutor>(); }

std::string slugify(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c)) {
      out += char(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

}  // namespace wb
