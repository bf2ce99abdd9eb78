#pragma once
// The emulator's stand-in for CUDA's mma.h: the warp matrix functions of nvcuda::wmma
// that wb's variants use, run lane by lane on the emulator (emu/emu.h).
//   shapes      tf32 m16n16k8 (A 16x8 and B 8x16 of wmma::precision::tf32, held as
//               float) and bf16 m16n16k16 (A and B 16x16 of __nv_bfloat16), each with
//               a 16x16 float accumulator
//   functions   fill_fragment, load_matrix_sync, store_matrix_sync, mma_sync,
//               __float_to_tf32
// A fragment holds num_elements values per lane in x[] (16x16 float accumulator: 8;
// tf32 A or B: 4; bf16 A or B: 8). CUDA leaves unspecified which matrix element each
// x[i] of each lane holds; the emulator draws the mapping for every kind of fragment
// from the run's seed (emu::fragment_layout), so code that uses only these functions,
// or applies one operation to every x[i] alike, gives the same result in every run,
// and code that assumes a layout gives results that change with the seed.
// load, store, fill and mma are warp-collective: the 32 lanes of a warp call them
// together (a lane missing is a synccheck fault naming it). Loads and stores go
// through the lanes' ordinary (checked) accesses, each lane touching the elements it
// holds; the pointer must be 32-byte aligned and ldm a multiple of 16 bytes (8
// __nv_bfloat16, 4 float), or the launch faults.
// mma_sync computes D = A * B + C with every product and every sum rounded to fp32
// (products of tf32 or bf16 values are exact in fp32); the tensor cores' order of
// summation is unspecified, and the emulator's (C, then k = 0, 1, ... in turn) is one
// fixed order, so results may differ from a GPU's in the last bits. tf32 operands are
// used as the code leaves them: round them with __float_to_tf32 first, as a GPU only
// reads their tf32 bits.
//
// Defined in wb::emu_build (emu/shim.h says why): variants reach them as
// nvcuda::wmma from inside namespace wb.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "emu/include/cuda_bf16.h"
#include "emu/shim.h"

namespace wb {
inline namespace emu_build {
namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}  // namespace precision
enum layout_t { mem_row_major, mem_col_major };

// cvt.rna.tf32.f32: round to nearest with ties away from zero to 10 explicit mantissa
// bits (the low 13 bits of the result are zero). Infinities and NaNs come back as they
// were; a finite value past the largest tf32 rounds to infinity.
inline float __float_to_tf32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;
  // Adding half of the dropped part to the magnitude rounds ties up in magnitude, that is
  // away from zero; a carry into the exponent is the right answer (the next binade, or
  // infinity).
  u = (u + 0x1000u) & 0xffffe000u;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

namespace detail {

// What a fragment is: its matrix (rows x cols), its element type, and a tag for its
// layout (emu::fragment_layout).
template <class Use, int M, int N, int K, class T>
struct shape;  // undefined: a fragment the emulator does not model

template <int Rows, int Cols, class Element, uint32_t Kind>
struct shape_of {
  static constexpr int rows = Rows, cols = Cols;
  using element = Element;
  static constexpr uint32_t kind = Kind;
};

// m16n16k8 on tf32 inputs and m16n16k16 on bf16 inputs, both accumulating in fp32.
template <>
struct shape<matrix_a, 16, 16, 8, precision::tf32> : shape_of<16, 8, float, 1> {};
template <>
struct shape<matrix_b, 16, 16, 8, precision::tf32> : shape_of<8, 16, float, 2> {};
template <>
struct shape<accumulator, 16, 16, 8, float> : shape_of<16, 16, float, 3> {};
template <>
struct shape<matrix_a, 16, 16, 16, __nv_bfloat16> : shape_of<16, 16, __nv_bfloat16, 4> {};
template <>
struct shape<matrix_b, 16, 16, 16, __nv_bfloat16> : shape_of<16, 16, __nv_bfloat16, 5> {};
template <>
struct shape<accumulator, 16, 16, 16, float> : shape_of<16, 16, float, 6> {};

inline ::wb::emu::Site site(const char* file, int line) { return ::wb::emu::Site{file, line}; }

// The alignment and stride rules of load_matrix_sync and store_matrix_sync.
template <class E>
inline void check_matrix_pointer(const void* p, unsigned ldm, const char* what, ::wb::emu::Site at) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address % 32 != 0)
    ::wb::emu::warp_matrix_fault(at, ::wb::emu::kMisalignedAddress,
                                 std::string(what) + ": the matrix pointer is not 32-byte (256-bit) aligned");
  if ((std::size_t(ldm) * sizeof(E)) % 16 != 0)
    ::wb::emu::warp_matrix_fault(at, ::wb::emu::kMisalignedAddress,
                                 std::string(what) + ": ldm " + std::to_string(ldm) + " is not a multiple of " +
                                     std::to_string(16 / sizeof(E)) + " elements (16 bytes)");
}

inline int lane() {
  return int(::wb::emu::builtins().thread_idx.x +
             ::wb::emu::builtins().block_dim.x *
                 (::wb::emu::builtins().thread_idx.y +
                  ::wb::emu::builtins().block_dim.y * ::wb::emu::builtins().thread_idx.z)) %
         32;
}

// The matrix elements (row * cols + col) that this lane's x[0..num_elements) hold in this
// run. Read where ThreadSanitizer does not look (and the scheduler is not told): the
// emulator's tables, made by whichever thread came first, are not the kernel's memory.
template <class F>
__attribute__((no_sanitize("thread"))) inline void lane_elements(int* out) {
  const uint16_t* element = ::wb::emu::fragment_layout(F::layout_kind, F::num_rows, F::num_cols);
  const int base = lane() * F::num_elements;
  for (int i = 0; i < F::num_elements; ++i) out[i] = element[base + i];
}

inline float widen(float v) { return v; }
inline float widen(__nv_bfloat16 v) { return float(v); }

// Where the elements this lane holds of fragment F lie in a matrix at p with leading
// dimension ldm (row-major: element (r, c) at p[r * ldm + c], else at p[c * ldm + r]),
// after what every lane of `what` does first: the pointer and ldm checked, and the
// warp met at the call.
template <class F, class E>
inline void lane_offsets(std::size_t (&offset)[F::num_elements], const E* p, unsigned ldm, bool row_major,
                         const char* what, const char* file, int line) {
  const ::wb::emu::Site at = site(file, line);
  check_matrix_pointer<E>(p, ldm, what, at);
  ::wb::emu::warp_matrix(at, what, 0, nullptr, false);
  int element[F::num_elements];
  lane_elements<F>(element);
  for (int i = 0; i < F::num_elements; ++i) {
    const int r = element[i] / F::num_cols, c = element[i] % F::num_cols;
    offset[i] = row_major ? std::size_t(r) * ldm + c : std::size_t(c) * ldm + r;
  }
}

}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  using shape = detail::shape<Use, M, N, K, T>;

 public:
  using element_type = typename shape::element;
  using storage_element_type = element_type;
  static constexpr int num_rows = shape::rows;
  static constexpr int num_cols = shape::cols;
  static constexpr int num_elements = shape::rows * shape::cols / 32;
  static constexpr uint32_t layout_kind = shape::kind;
  element_type x[num_elements];
};

template <class Use, int M, int N, int K, class T, class Layout>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f,
                          const typename fragment<Use, M, N, K, T, Layout>::element_type& v,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::wb::emu::warp_matrix(detail::site(file, line), "wmma::fill_fragment", 0, nullptr, false);
  for (auto& e : f.x) e = v;
}

// A or B from memory: row_major, element (r, c) at p[r * ldm + c]; col_major, at
// p[c * ldm + r].
template <class Use, int M, int N, int K, class T, class Layout, class E>
inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const E* p, unsigned ldm,
                             const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using F = fragment<Use, M, N, K, T, Layout>;
  static_assert(std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>,
                "a matrix_a or matrix_b fragment names its layout (row_major or col_major)");
  static_assert(std::is_same_v<std::remove_cv_t<E>, typename F::element_type>,
                "load_matrix_sync reads the fragment's element type");
  std::size_t offset[F::num_elements];
  detail::lane_offsets<F>(offset, p, ldm, std::is_same_v<Layout, row_major>, "wmma::load_matrix_sync", file, line);
  for (int i = 0; i < F::num_elements; ++i) f.x[i] = p[offset[i]];
}

// An accumulator from memory, laid out as `layout` says.
template <int M, int N, int K>
inline void load_matrix_sync(fragment<accumulator, M, N, K, float>& f, const float* p, unsigned ldm, layout_t layout,
                             const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using F = fragment<accumulator, M, N, K, float>;
  std::size_t offset[F::num_elements];
  detail::lane_offsets<F>(offset, p, ldm, layout == mem_row_major, "wmma::load_matrix_sync", file, line);
  for (int i = 0; i < F::num_elements; ++i) f.x[i] = p[offset[i]];
}

template <int M, int N, int K>
inline void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm, layout_t layout,
                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using F = fragment<accumulator, M, N, K, float>;
  std::size_t offset[F::num_elements];
  detail::lane_offsets<F>(offset, p, ldm, layout == mem_row_major, "wmma::store_matrix_sync", file, line);
  for (int i = 0; i < F::num_elements; ++i) p[offset[i]] = f.x[i];
}

namespace detail {

// What a lane hands the others at mma_sync: where its A and B fragments are.
template <class FA, class FB>
struct Operands {
  const FA* a;
  const FB* b;
};

// The lane's elements of A * B + C, reading A and B from every lane's fragments. The
// emulator's own exchange of registers, not memory the kernel shares: not reported to
// the scheduler or ThreadSanitizer (the meeting before it orders it anyway).
template <class FA, class FB, class FC>
__attribute__((no_sanitize("thread"))) inline void multiply_add(float* out, const FC& c, const uint64_t* lanes) {
  constexpr int M = FA::num_rows, K = FA::num_cols, N = FB::num_cols;
  const uint16_t* slot_a = ::wb::emu::fragment_layout(FA::layout_kind, M, K) + M * K;  // element -> slot
  const uint16_t* slot_b = ::wb::emu::fragment_layout(FB::layout_kind, K, N) + K * N;
  const uint16_t* element_c = ::wb::emu::fragment_layout(FC::layout_kind, M, N);
  const int base = lane() * FC::num_elements;
  for (int i = 0; i < FC::num_elements; ++i) {
    const int r = element_c[base + i] / N, col = element_c[base + i] % N;
    float sum = c.x[i];
    for (int k = 0; k < K; ++k) {
      const int sa = slot_a[r * K + k], sb = slot_b[k * N + col];
      const auto* oa = reinterpret_cast<const Operands<FA, FB>*>(uintptr_t(lanes[sa / FA::num_elements]));
      const auto* ob = reinterpret_cast<const Operands<FA, FB>*>(uintptr_t(lanes[sb / FB::num_elements]));
      const float product = widen(oa->a->x[sa % FA::num_elements]) * widen(ob->b->x[sb % FB::num_elements]);
      sum = sum + product;
    }
    out[i] = sum;
  }
}

}  // namespace detail

// D = A * B + C. The lanes first meet and hand each other their fragments' addresses
// (ordering memory, so that each may read the others' A and B); each computes its own
// elements of D (C is its own: C and D share a layout); they meet again, once every
// lane has read what it needs, and only then write D, which may be C.
template <int M, int N, int K, class T, class LayoutA, class LayoutB>
inline void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, LayoutA>& a,
                     const fragment<matrix_b, M, N, K, T, LayoutB>& b, const fragment<accumulator, M, N, K, float>& c,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using FA = fragment<matrix_a, M, N, K, T, LayoutA>;
  using FB = fragment<matrix_b, M, N, K, T, LayoutB>;
  using FC = fragment<accumulator, M, N, K, float>;
  static_assert(FA::num_rows == M && FA::num_cols == K && FB::num_rows == K && FB::num_cols == N, "A is MxK, B KxN");
  const ::wb::emu::Site at = detail::site(file, line);
  const detail::Operands<FA, FB> mine{&a, &b};
  uint64_t lanes[32];
  ::wb::emu::warp_matrix(at, "wmma::mma_sync", reinterpret_cast<uintptr_t>(&mine), lanes, true);
  float out[FC::num_elements];
  detail::multiply_add<FA, FB, FC>(out, c, lanes);
  ::wb::emu::warp_matrix(at, "wmma::mma_sync", 0, nullptr, true);
  for (int i = 0; i < FC::num_elements; ++i) d.x[i] = out[i];
}

}  // namespace nvcuda::wmma
}  // namespace emu_build
}  // namespace wb
