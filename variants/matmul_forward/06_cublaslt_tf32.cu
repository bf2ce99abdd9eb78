// matmul_forward, CUDA variant 6: cuBLASLt on TF32 tensor cores, bias fused into the
// epilogue.
//
// Idea: one cublasLtMatmul with compute type CUBLAS_COMPUTE_32F_FAST_TF32 (fp32 data,
// inputs rounded to TF32 inside the tensor-core kernel, fp32 accumulation) and the
// CUBLASLT_EPILOGUE_BIAS epilogue, so the bias is added as the tile is written instead
// of by a second pass over out. As in variant 5, the row-major product is computed as
// the column-major out^T (OC x rows) = weight^T-as-stored, transposed (C x OC, ld C,
// TRANSA = T) @ inp (C x rows, ld C); the bias then runs along the OC rows of D, as
// cuBLASLt requires. With a null bias the epilogue is the default one (no bias).
// The algorithm comes from cublasLtMatmulAlgoGetHeuristic, told the workspace this
// variant declares (32 MiB, what cuBLAS itself reserves on Hopper) and the actual
// alignment of every pointer (it assumes 256 bytes otherwise). The choice is cached per
// handle, dims, bias/no bias, alignments and workspace size, so that repeated calls do
// not pay for the heuristic. Should cuBLASLt offer no algorithm with the bias epilogue
// for some shape, the variant falls back to the default epilogue and variant 5's bias
// kernel (still correct, no longer fused).
// Why it should beat variant 5: TF32 tensor cores have several times the fp32 FMA
// throughput, and the fused bias saves a read and a write of out.
// Limits: TF32 keeps 10 mantissa bits of the inputs (the tf32 class and its
// tolerance); any shape runs.
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kernels/errors.h"
#include "kernels/cuda/libraries.h"
#include "kernels/ops/matmul_forward.h"
#include "variants/matmul_forward/common.cuh"

namespace wb::variants {
namespace {

namespace mf = matmul_forward_common;

constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;
constexpr int kBiasBlock = 256;  // block size of the fallback bias kernel

// Owners of the cuBLASLt descriptors; errors on destruction are ignored.
struct Desc {
  cublasLtMatmulDesc_t h = nullptr;
  ~Desc() {
    if (h) cublasLtMatmulDescDestroy(h);
  }
};
struct Layout {
  cublasLtMatrixLayout_t h = nullptr;
  ~Layout() {
    if (h) cublasLtMatrixLayoutDestroy(h);
  }
};
struct Preference {
  cublasLtMatmulPreference_t h = nullptr;
  ~Preference() {
    if (h) cublasLtMatmulPreferenceDestroy(h);
  }
};

// The largest power of two up to 256 that divides the address (at least 4 for floats).
uint32_t alignment_of(const void* p) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 4 && address % align != 0) align /= 2;
  return align;
}

// The operation and the matrices of one call.
struct Problem {
  Desc desc;
  Layout a, b, d;  // weight (C x OC, ld C), inp (C x rows, ld C), out (OC x rows, ld OC); C reuses d
};

void describe(Problem& p, const MatmulForwardArgs& args, bool fused_bias) {
  const int64_t rows = int64_t(args.B) * args.T;
  WB_CHECK(cublasLtMatmulDescCreate(&p.desc.h, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.h, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.h, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  const uint32_t epilogue = fused_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.h, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  if (fused_bias) {
    const void* bias = args.bias;
    WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  WB_CHECK(cublasLtMatrixLayoutCreate(&p.a.h, CUDA_R_32F, uint64_t(args.C), uint64_t(args.OC), args.C));
  WB_CHECK(cublasLtMatrixLayoutCreate(&p.b.h, CUDA_R_32F, uint64_t(args.C), uint64_t(rows), args.C));
  WB_CHECK(cublasLtMatrixLayoutCreate(&p.d.h, CUDA_R_32F, uint64_t(args.OC), uint64_t(rows), args.OC));
}

// The heuristic's first choice, or false when it has none for this configuration.
bool heuristic(cublasLtHandle_t lt, const MatmulForwardArgs& args, bool fused_bias, std::size_t workspace_bytes,
               cublasLtMatmulAlgo_t* algo) {
  Problem p;
  describe(p, args, fused_bias);
  Preference pref;
  WB_CHECK(cublasLtMatmulPreferenceCreate(&pref.h));
  const uint64_t max_workspace = workspace_bytes;
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                                sizeof(max_workspace)));
  const uint32_t align_a = alignment_of(args.weight), align_b = alignment_of(args.inp),
                 align_d = alignment_of(args.out);
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a,
                                                sizeof(align_a)));
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b,
                                                sizeof(align_b)));
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_d,
                                                sizeof(align_d)));
  WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d,
                                                sizeof(align_d)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(lt, p.desc.h, p.a.h, p.b.h, p.d.h, p.d.h, pref.h, 1, &result, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  WB_CHECK(status);
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS) return false;
  *algo = result.algo;
  return true;
}

struct Plan {
  cublasLtMatmulAlgo_t algo;
  bool fused_bias;
};

// What the heuristic's choice depends on.
using PlanKey = std::tuple<const void*, int, int, int, bool, uint32_t, uint32_t, uint32_t, uint32_t, std::size_t>;

Plan plan_for(cublasLtHandle_t lt, const MatmulForwardArgs& args, std::size_t workspace_bytes) {
  static std::mutex mutex;
  static std::map<PlanKey, Plan> plans;
  const PlanKey key{lt,
                    args.B * args.T,
                    args.C,
                    args.OC,
                    args.bias != nullptr,
                    alignment_of(args.weight),
                    alignment_of(args.inp),
                    alignment_of(args.out),
                    args.bias ? alignment_of(args.bias) : 0u,
                    workspace_bytes};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  Plan plan{};
  plan.fused_bias = args.bias != nullptr;
  if (!heuristic(lt, args, plan.fused_bias, workspace_bytes, &plan.algo)) {
    plan.fused_bias = false;
    if (!args.bias || !heuristic(lt, args, false, workspace_bytes, &plan.algo))
      throw Unsupported("cuBLASLt offers no TF32 algorithm for rows=" + std::to_string(args.B * args.T) +
                               " C=" + std::to_string(args.C) + " OC=" + std::to_string(args.OC));
  }
  std::lock_guard<std::mutex> lock(mutex);
  plans.emplace(key, plan);
  return plan;
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  cublasLtHandle_t lt = cuda::libraries(l).cublaslt();
  const Plan plan = plan_for(lt, a, l.workspace_bytes);
  Problem p;
  describe(p, a, plan.fused_bias);
  const float alpha = 1.0f, beta = 0.0f;  // beta = 0: out is not read, only written
  WB_CHECK(cublasLtMatmul(lt, p.desc.h, &alpha, a.weight, p.a.h, a.inp, p.b.h, &beta, a.out, p.d.h, a.out, p.d.h,
                          &plan.algo, l.workspace, l.workspace_bytes, cuda::stream(l)));
  if (a.bias && !plan.fused_bias) mf::add_bias(a.out, a.bias, int64_t(a.B) * a.T, a.OC, kBiasBlock, cuda::stream(l));
}

}  // namespace

Variant matmul_forward_cuda_6() {
  Variant v = Variant::of(&launch);
  v.op = "matmul_forward";
  v.backend = Backend::cuda;
  v.id = 6;
  v.name = "cublaslt_tf32";
  v.summary = "one cuBLASLt matmul on TF32 tensor cores (32F_FAST_TF32), bias fused into the epilogue, heuristic algo";
  v.numeric = NumericClass::tf32;
  v.workspace = [](const Shape&, const ParamValues&) { return kWorkspaceBytes; };
  return v;
}

}  // namespace wb::variants
