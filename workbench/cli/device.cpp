// wb device: the device's properties and its measured ceilings.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "workbench/cli/commands.h"
#include "workbench/cli/options.h"
#include "workbench/runtime/context.h"

namespace wb::cli {
namespace {

struct DeviceOptions {
  std::string backend;
  bool slug_only = false;
};

// What this CPU has, as capped (cpu and emu backends).
void print_cpu(const DeviceInfo& d) {
  std::cout << fmt::format("compute   {} logical cores\n", d.multiprocessors);
  std::cout << fmt::format("memory    {:.1f} GiB; last-level cache {}\n", d.memory_bytes / double(1 << 30),
                           d.l2_bytes > 0 ? fmt::format("{:.1f} MiB", d.l2_bytes / double(1 << 20))
                                          : std::string("unknown (neither sysfs nor CPUID gives its size)"));
  std::cout << fmt::format("blas      {}\n", build_info().blas);
  if (d.isa.empty()) return;
  const CpuCapabilities c = host_cpu_capabilities();
  std::cout << fmt::format("isa       {} (level {}{})\n", c.features, d.isa,
                           c.cap.empty() ? "" : ", capped by WB_CPU_ISA=" + c.cap);
  if (c.detected != c.features)
    std::cout << fmt::format("          the CPU itself has {} (level {})\n", c.detected, c.detected_level);
  std::cout << fmt::format("onednn    {}\n", c.onednn);
  std::cout << fmt::format("openblas  kernels for {}\n", c.openblas_core);
}

void print_ceilings(const Ceilings& c) {
  std::cout << fmt::format("ceilings  copy {:.1f} GB/s; ", c.copy_gbps);
  if (c.memory_gbps > 0)
    std::cout << fmt::format("read {:.1f} GB/s; update {:.1f} GB/s; memory (the roofline's) {:.1f} GB/s; ", c.read_gbps,
                             c.update_gbps, c.memory_gbps);
  std::cout << fmt::format("fp32 GEMM {:.2f} TFLOP/s", c.fp32_tflops);
  if (c.tf32_tflops > 0) std::cout << fmt::format("; tf32 GEMM {:.2f} TFLOP/s", c.tf32_tflops);
  if (c.bf16_tflops > 0) std::cout << fmt::format("; bf16 GEMM {:.2f} TFLOP/s", c.bf16_tflops);
  std::cout << "\n          measured by " << c.method << "\n";
  for (const auto& [field, why] : c.absent) std::cout << fmt::format("absent    {}: {}\n", field, why);
}

int device(const DeviceOptions& o) {
  const Backend b = resolve_backend(o.backend);
  auto ex = make_executor(b);
  const DeviceInfo& d = ex->device();
  if (o.slug_only) {
    std::cout << d.slug << "\n";
    return kOk;
  }
  std::cout << fmt::format("device    {} ({} backend, slug {})\n", d.name, to_string(b), d.slug);
  if (b == Backend::cuda) {
    std::cout << fmt::format("compute   {} SMs at {:.0f} MHz, compute capability {}\n", d.multiprocessors,
                             d.clock_khz / 1e3, d.compute_capability);
    std::cout << fmt::format("memory    {:.1f} GiB, memory clock {:.0f} MHz, {}-bit bus; L2 {:.1f} MiB\n",
                             d.memory_bytes / double(1 << 30), d.memory_clock_khz / 1e3, d.memory_bus_bits,
                             d.l2_bytes / double(1 << 20));
    std::cout << fmt::format("software  driver {}, runtime {}\n", d.driver_version, d.runtime_version);
  } else {
    print_cpu(d);
  }
  print_ceilings(ex->measure_ceilings());
  return kOk;
}

void add_options(CLI::App& cmd, DeviceOptions& o) {
  add_backend_option(cmd, o.backend);
  cmd.add_flag("--slug", o.slug_only, "print only the device's slug (the results/ folder name)");
}

}  // namespace

Command add_device_command(CLI::App& app) {
  return new_command(app, "device",
                     "the device's properties and its measured ceilings: copy bandwidth and GEMM throughput",
                     add_options, device);
}

}  // namespace wb::cli