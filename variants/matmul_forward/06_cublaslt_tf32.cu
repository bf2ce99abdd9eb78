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

#if !WB_EMU
#include "kernels/cuda/cublaslt.h"
#endif
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/libraries.h"
#include "kernels/errors.h"
#include "kernels/ops/matmul_forward.h"
#include "kernels/cuda/matmul.cuh"

namespace wb::variants {
namespace {

namespace mf = cuda::matmul;

constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;
constexpr int kBiasBlock = 256;  // block size of the fallback bias kernel

#if !WB_EMU  // the emulator cannot run it (Variant::not_emulated): the GPU build only

using cuda::alignment_of;

// The operation and the matrices of one call.
struct Problem {
  cuda::LtMatmulDesc desc;
  cuda::LtMatrixLayout a, b, d;  // weight (C x OC, ld C), inp (C x rows, ld C), out (OC x rows, ld OC); C reuses d
};

Problem describe(const MatmulForwardArgs& args, bool fused_bias) {
  const int64_t rows = int64_t(args.B) * args.T;
  Problem p{cuda::LtMatmulDesc(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F),
            cuda::LtMatrixLayout(CUDA_R_32F, uint64_t(args.C), uint64_t(args.OC), args.C),
            cuda::LtMatrixLayout(CUDA_R_32F, uint64_t(args.C), uint64_t(rows), args.C),
            cuda::LtMatrixLayout(CUDA_R_32F, uint64_t(args.OC), uint64_t(rows), args.OC)};
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  const uint32_t epilogue = fused_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  if (fused_bias) {
    const void* bias = args.bias;
    WB_CHECK(cublasLtMatmulDescSetAttribute(p.desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  return p;
}

// The heuristic's first choice, or false when it has none for this configuration.
bool heuristic(cublasLtHandle_t lt, const MatmulForwardArgs& args, bool fused_bias, std::size_t workspace_bytes,
               cublasLtMatmulAlgo_t* algo) {
  const Problem p = describe(args, fused_bias);
  const cuda::LtMatmulPreference pref =
      cuda::preference_for(workspace_bytes, alignment_of(args.weight), alignment_of(args.inp), alignment_of(args.out));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt, p.desc.get(), p.a.get(), p.b.get(), p.d.get(),
                                                               p.d.get(), pref.get(), 1, &result, &found);
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
  const Problem p = describe(a, plan.fused_bias);
  const float alpha = 1.0f, beta = 0.0f;  // beta = 0: out is not read, only written
  WB_CHECK(cublasLtMatmul(lt, p.desc.get(), &alpha, a.weight, p.a.get(), a.inp, p.b.get(), &beta, a.out, p.d.get(),
                          a.out, p.d.get(), &plan.algo, l.workspace, l.workspace_bytes, cuda::stream(l)));
  if (a.bias && !plan.fused_bias) mf::add_bias(a.out, a.bias, int64_t(a.B) * a.T, a.OC, kBiasBlock, cuda::stream(l));
}

#endif

}  // namespace

Variant matmul_forward_cuda_6() {
  Variant v = Variant::of<MatmulForwardArgs>(WB_DEVICE_ONLY(launch));
  v.summary = "one cuBLASLt matmul on TF32 tensor cores (32F_FAST_TF32), bias fused into the epilogue, heuristic algo";
  v.numeric = NumericClass::tf32;
  v.not_emulated = "needs cuBLASLt";
  v.workspace = [](const Shape&, const ParamValues&) { return kWorkspaceBytes; };
  return v;
}

}  // namespace wb::variants
