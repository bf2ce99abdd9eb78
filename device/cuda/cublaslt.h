#pragma once
// The cuBLASLt objects one matmul call needs -- the operation descriptor, the matrix
// layouts and the preference that steers the algorithm heuristic -- as RAII owners,
// and the pointer alignment that the heuristic is told about; the set-up the cuBLASLt
// rungs share (their Variant and workspace, the linear layer's problem and the bf16
// linear rungs' whole call, the two products of the backward pass) and a cache of the
// heuristic's choices.
//
// An owner creates its object in its constructor (WB_CHECK: a failure throws) and
// destroys it in its destructor, also when a later call throws; errors of the destroy
// call are ignored (nothing useful can be done about them there). Owners are not
// copyable; they are movable, and a moved-from owner holds nothing.
//
// Under the emulator (WB_EMU) there is no cuBLASLt: only the workspace size and the
// rung's Variant, which a rung declares in either build, are defined.
#include <cstddef>
#include <string>
#include <utility>

#include "contract/variant.h"
#include "device/cuda/library_rung.h"

namespace wb::cuda {

// The workspace of every cuBLASLt rung: 32 MiB, what cuBLAS reserves on Hopper.
constexpr std::size_t kLtWorkspaceBytes = std::size_t(32) << 20;

// A cuBLASLt rung's Variant: library_rung's (not emulated: "needs cuBLASLt") with the
// kLtWorkspaceBytes workspace every cuBLASLt rung declares.
template <class Args>
Variant cublaslt_rung(void (*launch)(const Args&, const Launch&), std::string summary,
                      NumericClass numeric = NumericClass::fp32) {
  Variant v = library_rung<Args>(launch, "cuBLASLt", std::move(summary), numeric);
  v.workspace = [](const Shape&, const ParamValues&) { return kLtWorkspaceBytes; };
  return v;
}

}  // namespace wb::cuda

#if !WB_EMU
#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "base/errors.h"
#include "device/cuda/libraries.h"

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

// Sets one attribute of an operation descriptor to `value` (its size is the value's).
template <class T>
void set_attribute(const LtMatmulDesc& desc, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  WB_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), attribute, &value, sizeof(value)));
}

// The operation and the matrices of one call D = op(A) op(B) (+ beta C), where C is D
// (in place: a rung that accumulates passes beta 1, one that overwrites beta 0).
struct LtProblem {
  LtMatmulDesc desc;
  LtMatrixLayout a, b, d;
};

// The linear layer (matmul_forward and its fused relatives) on matrices of `type`: the
// row-major out (rows x OC) = inp (rows x C) @ weight^T is the column-major
// out^T (OC x rows, ld OC) = weight stored C x OC (ld C, TRANSA = T) @ inp^T (C x rows,
// ld C, TRANSB = N), so that a bias runs along D's OC rows as cuBLASLt requires. The
// epilogue is left at its default: the caller sets its own.
inline LtProblem linear_problem(cublasComputeType_t compute, cudaDataType_t type, int64_t rows, int C, int OC) {
  LtProblem p{LtMatmulDesc(compute, CUDA_R_32F), LtMatrixLayout(type, uint64_t(C), uint64_t(OC), C),
              LtMatrixLayout(type, uint64_t(C), uint64_t(rows), C),
              LtMatrixLayout(type, uint64_t(OC), uint64_t(rows), OC)};
  set_attribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(CUBLAS_OP_T));
  set_attribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(CUBLAS_OP_N));
  return p;
}

// Runs a linear_problem with algorithm algo: out = weight-and-inp product, through the
// epilogue the caller set; beta 0, so out is only written, never read.
inline void run_linear(cublasLtHandle_t handle, const LtProblem& p, const cublasLtMatmulAlgo_t& algo,
                       const void* weight, const void* inp, void* out, void* workspace, std::size_t workspace_bytes,
                       cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  WB_CHECK(cublasLtMatmul(handle, p.desc.get(), &alpha, weight, p.a.get(), inp, p.b.get(), &beta, out, p.d.get(), out,
                          p.d.get(), &algo, workspace, workspace_bytes, stream));
}

// One column-major product D (m x n, ld ldd) = A (m x k, ld lda) @ op(B) + beta * D on
// matrices of one type, where B is stored k x n (transb N) or n x k (transb T) with
// leading dimension ldb: the two products of the matmul_backward rungs.
struct LtGemm {
  int m, n, k;
  const void* A;
  int lda;
  const void* B;
  int ldb;
  cublasOperation_t transb;
  void* D;
  int ldd;
  float beta;
};

// g's operation (TRANSA = N, fp32 scale type) and layouts.
inline LtProblem gemm_problem(const LtGemm& g, cublasComputeType_t compute, cudaDataType_t type) {
  const bool b_n = g.transb == CUBLAS_OP_N;  // B stored k x n, else n x k
  LtProblem p{LtMatmulDesc(compute, CUDA_R_32F), LtMatrixLayout(type, uint64_t(g.m), uint64_t(g.k), g.lda),
              LtMatrixLayout(type, uint64_t(b_n ? g.k : g.n), uint64_t(b_n ? g.n : g.k), g.ldb),
              LtMatrixLayout(type, uint64_t(g.m), uint64_t(g.n), g.ldd)};
  set_attribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(CUBLAS_OP_N));
  set_attribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(g.transb));
  return p;
}

// What the heuristic's choice for g depends on (it is not told beta: one plan serves
// either): handle, sizes, leading dimensions, transb, alignments of A, B and D, workspace.
using LtGemmKey = std::tuple<const void*, int, int, int, int, int, int, int, uint32_t, uint32_t, uint32_t, std::size_t>;

inline LtGemmKey key_of(cublasLtHandle_t handle, const LtGemm& g, std::size_t workspace_bytes) {
  return LtGemmKey{handle,
                   g.m,
                   g.n,
                   g.k,
                   g.lda,
                   g.ldb,
                   int(g.transb),
                   g.ldd,
                   alignment_of(g.A),
                   alignment_of(g.B),
                   alignment_of(g.D),
                   workspace_bytes};
}

// Runs g as p describes it with algorithm algo: D = 1 * A op(B) + g.beta * D.
inline void run_gemm(cublasLtHandle_t handle, const LtProblem& p, const LtGemm& g, const cublasLtMatmulAlgo_t& algo,
                     void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  const float one = 1.0f;
  WB_CHECK(cublasLtMatmul(handle, p.desc.get(), &one, g.A, p.a.get(), g.B, p.b.get(), &g.beta, g.D, p.d.get(), g.D,
                          p.d.get(), &algo, workspace, workspace_bytes, stream));
}

// The bf16 rungs' choice: the heuristic's first algorithm for p (C is D) with the
// pointers' alignments and the reduction restricted to the compute type
// (reduce_in_compute_type), or Unsupported(why()) where it offers none.
template <class Why>
cublasLtMatmulAlgo_t first_algo_reducing_in_compute_type(cublasLtHandle_t handle, const LtProblem& p,
                                                         std::size_t workspace_bytes, uint32_t align_a,
                                                         uint32_t align_b, uint32_t align_d, Why why) {
  const LtMatmulPreference pref = preference_for(workspace_bytes, align_a, align_b, align_d);
  reduce_in_compute_type(pref);
  cublasLtMatmulAlgo_t algo{};
  if (!first_algo(handle, p.desc, p.a, p.b, p.d, p.d, pref, &algo)) throw Unsupported(why());
  return algo;
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

// The matrices of one linear layer: weight, inp and out, and the epilogue's aux matrix
// and bias where it has them (null otherwise). The heuristic's choice depends on them
// through their alignments.
struct LinearOperands {
  const void* weight;
  const void* inp;
  void* out;
  void* aux = nullptr;
  const void* bias = nullptr;
};

// What the heuristic's choice for a linear_problem depends on: handle, rows, C, OC, the
// epilogue, the alignments of weight, inp, out, aux and bias (0: absent), workspace.
using LinearKey =
    std::tuple<const void*, int64_t, int, int, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, std::size_t>;

// One cache for every linear rung of the process (an inline function's static is one
// object across translation units); the epilogue in the key keeps their plans apart.
inline PlanCache<LinearKey, cublasLtMatmulAlgo_t>& linear_plans() {
  static PlanCache<LinearKey, cublasLtMatmulAlgo_t> plans;
  return plans;
}

// The bf16 linear rungs' algorithm for p, a linear_problem of rows x C @ C x OC whose
// epilogue the caller set to `epilogue`: first_algo_reducing_in_compute_type's, cached
// in linear_plans(); Unsupported(why()) where the heuristic offers none.
template <class Why>
cublasLtMatmulAlgo_t linear_plan(cublasLtHandle_t handle, const LtProblem& p, int64_t rows, int C, int OC,
                                 cublasLtEpilogue_t epilogue, const LinearOperands& o, std::size_t workspace_bytes,
                                 Why why) {
  const auto align = [](const void* q) { return q ? alignment_of(q) : 0u; };
  const LinearKey key{handle,
                      rows,
                      C,
                      OC,
                      uint32_t(epilogue),
                      align(o.weight),
                      align(o.inp),
                      align(o.out),
                      align(o.aux),
                      align(o.bias),
                      workspace_bytes};
  return linear_plans().get(key, [&] {
    return first_algo_reducing_in_compute_type(handle, p, workspace_bytes, align(o.weight), align(o.inp), align(o.out),
                                               why);
  });
}

// The cuBLASLt name of an epilogue the linear rungs use, for messages.
inline std::string epilogue_name(cublasLtEpilogue_t epilogue) {
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "DEFAULT";
    case CUBLASLT_EPILOGUE_BIAS:
      return "BIAS";
    case CUBLASLT_EPILOGUE_GELU_AUX:
      return "GELU_AUX";
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      return "GELU_AUX_BIAS";
    default:
      return "epilogue " + std::to_string(int(epilogue));
  }
}

// The call of the bf16 linear rungs: out (rows x OC) = epilogue(inp (rows x C) @
// weight^T) on bf16 matrices with fp32 compute, as linear_problem lays it out, on the
// launch's cuBLASLt handle, stream and workspace. The descriptor gets the epilogue and
// what it reads or writes besides D: the bias where o.bias is not null (bf16, along D's
// OC rows) and the aux matrix where o.aux is not null (bf16, D's shape, leading
// dimension OC: the GELU input of the GELU_AUX epilogues). The algorithm is linear_plan's
// (restricted to reductions in the compute type, cached); where the heuristic offers
// none, Unsupported naming `who`, the epilogue and the shape.
inline void run_bf16_linear(const Launch& l, const LinearOperands& o, int64_t rows, int C, int OC,
                            cublasLtEpilogue_t epilogue, const char* who) {
  LtProblem p = linear_problem(CUBLAS_COMPUTE_32F, CUDA_R_16BF, rows, C, OC);
  set_attribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(epilogue));
  if (o.aux) {
    set_attribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, o.aux);
    set_attribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(OC));
    set_attribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, int32_t(CUDA_R_16BF));
  }
  if (o.bias) {
    set_attribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, o.bias);
    set_attribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(CUDA_R_16BF));
  }
  cublasLtHandle_t handle = libraries(l).cublaslt();
  const cublasLtMatmulAlgo_t algo = linear_plan(handle, p, rows, C, OC, epilogue, o, l.workspace_bytes, [&] {
    return std::string(who) + ": cuBLASLt offers no bf16 algorithm reducing in fp32 with the " +
           epilogue_name(epilogue) + " epilogue for rows=" + std::to_string(rows) + " C=" + std::to_string(C) +
           " OC=" + std::to_string(OC);
  });
  run_linear(handle, p, algo, o.weight, o.inp, o.out, l.workspace, l.workspace_bytes, stream(l));
}

}  // namespace wb::cuda

#endif  // !WB_EMU
