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
#include <map>
#include <mutex>
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

// Restricts the heuristic to algorithms that sum the whole dot product in one sequence
// or that add split-k partial sums in the compute type (fp32 partials in the
// workspace, reduced in a separate step): not in place in D, not in the output type.
// For a bf16 D this keeps each output rounded once, from the fp32 sum; cuBLASLt's
// default mask allows every scheme (cublasLtReductionScheme_t, cublasLt.h).
inline void reduce_in_compute_type(const LtMatmulPreference& pref) {
  const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
                                                sizeof(mask)));
}

// The heuristic's first choice for D = op(A) op(B) (+ C) as `desc` describes it, or
// false when it has none (no algorithm, or CUBLAS_STATUS_NOT_SUPPORTED for the
// configuration); other errors throw.
inline bool first_algo(cublasLtHandle_t handle, const LtMatmulDesc& desc, const LtMatrixLayout& a,
                       const LtMatrixLayout& b, const LtMatrixLayout& c, const LtMatrixLayout& d,
                       const LtMatmulPreference& pref, cublasLtMatmulAlgo_t* algo) {
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle, desc.get(), a.get(), b.get(), c.get(), d.get(),
                                                               pref.get(), 1, &result, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  WB_CHECK(status);
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS) return false;
  *algo = result.algo;
  return true;
}

// A process-wide map from what a heuristic's choice depends on (Key: handle, sizes,
// alignments, workspace, ...) to that choice (Plan), so that repeated launches skip the
// host-side query. Safe to call from several threads; `make` runs outside the lock (two
// threads may both compute a plan for a new key; the first stored wins).
template <class Key, class Plan>
class PlanCache {
 public:
  template <class Make>
  Plan get(const Key& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    Plan plan = make();
    std::lock_guard<std::mutex> lock(mutex_);
    return plans_.emplace(key, plan).first->second;
  }

 private:
  std::mutex mutex_;
  std::map<Key, Plan> plans_;
};

}  // namespace wb::cuda
