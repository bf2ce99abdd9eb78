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
#include <stdexcept>
#include <string>
#include <tuple>

#include "base/errors.h"
#include "contract/ops/matmul_forward.h"
#include "device/cuda/cublaslt.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/libraries.h"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

namespace mf = cuda::matmul;

constexpr int kBiasBlock = 256;  // block size of the fallback bias kernel

#if !WB_EMU  // the emulator cannot run it (Variant::not_emulated): the GPU build only

using cuda::alignment_of;

using cuda::LtProblem;

LtProblem describe(const MatmulForwardArgs& args, bool fused_bias) {
  LtProblem p =
      cuda::linear_problem(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, int64_t(args.B) * args.T, args.C, args.OC);
  cuda::set_attribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                      uint32_t(fused_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT));
  if (fused_bias) cuda::set_attribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(args.bias));
  return p;
}

// The heuristic's first choice, or false when it has none for this configuration.
bool heuristic(cublasLtHandle_t lt, const MatmulForwardArgs& args, bool fused_bias, std::size_t workspace_bytes,
               cublasLtMatmulAlgo_t* algo) {
  const LtProblem p = describe(args, fused_bias);
  const cuda::LtMatmulPreference pref =
      cuda::preference_for(workspace_bytes, alignment_of(args.weight), alignment_of(args.inp), alignment_of(args.out));
  return cuda::first_algo(lt, p.desc, p.a, p.b, p.d, p.d, pref, algo);
}

struct Plan {
  cublasLtMatmulAlgo_t algo;
  bool fused_bias;
};

// What the heuristic's choice depends on.
using PlanKey = std::tuple<const void*, int, int, int, bool, uint32_t, uint32_t, uint32_t, uint32_t, std::size_t>;

Plan plan_for(cublasLtHandle_t lt, const MatmulForwardArgs& args, std::size_t workspace_bytes) {
  static cuda::PlanCache<PlanKey, Plan> plans;
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
  return plans.get(key, [&] {
    Plan plan{};
    plan.fused_bias = args.bias != nullptr;
    if (!heuristic(lt, args, plan.fused_bias, workspace_bytes, &plan.algo)) {
      plan.fused_bias = false;
      if (!args.bias || !heuristic(lt, args, false, workspace_bytes, &plan.algo))
        throw Unsupported("cuBLASLt offers no TF32 algorithm for rows=" + std::to_string(args.B * args.T) +
                          " C=" + std::to_string(args.C) + " OC=" + std::to_string(args.OC));
    }
    return plan;
  });
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  cublasLtHandle_t lt = cuda::libraries(l).cublaslt();
  const Plan plan = plan_for(lt, a, l.workspace_bytes);
  const LtProblem p = describe(a, plan.fused_bias);
  cuda::run_linear(lt, p, plan.algo, a.weight, a.inp, a.out, l.workspace, l.workspace_bytes, cuda::stream(l));
  if (a.bias && !plan.fused_bias) mf::add_bias(a.out, a.bias, int64_t(a.B) * a.T, a.OC, kBiasBlock, cuda::stream(l));
}

#endif

}  // namespace

Variant matmul_forward_cuda_6() {
  return cuda::cublaslt_rung<MatmulForwardArgs>(
      WB_DEVICE_ONLY(launch),
      "one cuBLASLt matmul on TF32 tensor cores (32F_FAST_TF32), bias fused into the epilogue, heuristic algo",
      NumericClass::tf32);
}

}  // namespace wb::variants
