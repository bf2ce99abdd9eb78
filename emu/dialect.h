#pragma once
// The emulator's side of device/cuda/dialect.cuh (WB_EMU): the macros that spell a
// launch and shared memory for the host compiler, and the checked emulated launch.
// It lives under emu/ because the emulator is test machinery: a variant's source hash
// (cmake/GenerateRegistry.cmake) leaves out emu/, so that editing this file does not
// mark what a device verified as "changed since verified".
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

// Included only by device/cuda/dialect.cuh, after device/cuda/runtime.h (cuda::check,
// cudaStream_t), which emu/ may not include itself (ci/check_layers.py).

#define WB_DEVICE_ONLY(launcher) nullptr
#define WB_LAUNCH(...) ::wb::cuda::launch(#__VA_ARGS__, __FILE__, __LINE__, __VA_ARGS__)
#define WB_SHARED(type, name, dims)                                                                   \
  static const ::wb::emu::SharedDecl wb_shared_decl_##name{#name, __FILE__, __LINE__};               \
  type(&name) dims = *static_cast<type(*) dims>(                                                      \
      ::wb::emu::shared_array(wb_shared_decl_##name, sizeof(type dims), alignof(type)))
#define WB_SHARED_ALIGNED(align, type, name, dims)                                                    \
  static const ::wb::emu::SharedDecl wb_shared_decl_##name{#name, __FILE__, __LINE__};               \
  type(&name) dims = *static_cast<type(*) dims>(                                                      \
      ::wb::emu::shared_array(wb_shared_decl_##name, sizeof(type dims), align))
#define WB_DYNAMIC_SHARED(type, name) type* const name = static_cast<type*>(::wb::emu::dynamic_shared())

namespace wb::cuda {

template <class... Params, class... Args>
void launch(const char* text, const char* file, int line, void (*kernel)(Params...), dim3 grid, dim3 block,
            std::size_t dynamic_shared, cudaStream_t, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "a kernel launch passes one argument per parameter");
  // Copied once, by value, as a launch does; each emulated thread calls the kernel on
  // them. The body owns its copy (captured by value), so that a launch recorded in a
  // CUDA-graph capture (emu/emu.h) can run after this call has returned.
  std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  ::wb::emu::LaunchSpec spec;
  spec.text = text;
  spec.file = file;
  spec.line = line;
  spec.kernel = reinterpret_cast<const void*>(kernel);
  spec.grid = grid;
  spec.block = block;
  spec.dynamic_shared = dynamic_shared;
  ::wb::emu::launch(spec, [kernel, params = std::move(params)] { std::apply(kernel, params); });
  check(cudaGetLastError(), text, file, line);
}

}  // namespace wb::cuda
