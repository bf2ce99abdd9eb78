#pragma once
// The cuBLASLt objects one matmul call needs -- the operation descriptor, the matrix
// layouts and the preference that steers the algorithm heuristic -- as RAII owners,
// and the pointer alignment that the heuristic is told about.
//
// An owner creates its object in its constructor (WB_CHECK: a failure throws) and
// destroys it in its destructor, also when a later call throws; errors of the destroy
// call are ignored (nothing useful can be done about them there). Owners are not
// copyable; they are movable, and a moved-from owner holds nothing.
#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/cuda/libraries.h"

namespace wb::cuda {

namespace lt_detail {

// Owner of one cuBLASLt object of handle type H, released by Destroy.
template <class H, cublasStatus_t (*Destroy)(H)>
class Owner {
 public:
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  Owner(Owner&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  Owner& operator=(Owner&& other) noexcept {
    if (this != &other) {
      release();
      h_ = std::exchange(other.h_, nullptr);
    }
    return *this;
  }
  ~Owner() { release(); }

  H get() const { return h_; }

 protected:
  Owner() = default;
  H* slot() { return &h_; }  // where the derived constructor's create call puts the handle

 private:
  void release() {
    if (h_) (void)Destroy(h_);
    h_ = nullptr;
  }
  H h_ = nullptr;
};

}  // namespace lt_detail

// cublasLtMatmulDescCreate(compute, scale).
class LtMatmulDesc : public lt_detail::Owner<cublasLtMatmulDesc_t, &cublasLtMatmulDescDestroy> {
 public:
  LtMatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {
    WB_CHECK(cublasLtMatmulDescCreate(slot(), compute, scale));
  }
};

// cublasLtMatrixLayoutCreate: a column-major rows x cols matrix of `type`, leading
// dimension ld.
class LtMatrixLayout : public lt_detail::Owner<cublasLtMatrixLayout_t, &cublasLtMatrixLayoutDestroy> {
 public:
  LtMatrixLayout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {
    WB_CHECK(cublasLtMatrixLayoutCreate(slot(), type, rows, cols, ld));
  }
};

// cublasLtMatmulPreferenceCreate; see also preference_for below.
class LtMatmulPreference : public lt_detail::Owner<cublasLtMatmulPreference_t, &cublasLtMatmulPreferenceDestroy> {
 public:
  LtMatmulPreference() { WB_CHECK(cublasLtMatmulPreferenceCreate(slot())); }
};

// The largest power of two up to 256 that divides the address (at least 4 for
// floats). The heuristic assumes 256-byte aligned pointers unless told otherwise.
inline uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  uint32_t align = 256;
  while (align > 4 && address % align != 0) align /= 2;
  return align;
}

// The preference for an in-place product (C is D): at most max_workspace bytes of
// workspace, and the alignments of A, B and D (from alignment_of).
inline LtMatmulPreference preference_for(std::size_t max_workspace, uint32_t align_a, uint32_t align_b,
                                         uint32_t align_d) {
  LtMatmulPreference pref;
  const uint64_t workspace = max_workspace;
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                sizeof(workspace)));
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a,
                                                sizeof(align_a)));
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b,
                                                sizeof(align_b)));
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_d,
                                                sizeof(align_d)));
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d,
                                                sizeof(align_d)));
  return pref;
}

}  // namespace wb::cuda
