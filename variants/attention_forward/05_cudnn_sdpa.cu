// attention_forward, CUDA variant 5: cuDNN fused scaled-dot-product attention (bf16).
//
// Idea: hand the whole op to cuDNN's fused flash-attention engine through the cuDNN 9
// backend (graph) API. A conversion kernel copies the fused qkv to bf16 in the
// workspace, unchanged in layout, so that Q, K and V are strided views of it:
//   Q, V   (B, NH, T, hs)  strides (3CT, hs, 3C, 1), at element offsets 0 and 2C
//   K^T    (B, NH, hs, T)  strides (3CT, hs, 1, 3C), at element offset C
// The operation graph is the SDPA pattern the engine recognises:
//   S = Q K^T (fp32 accumulate); S *= scale (by-value scalar 1/sqrt(hs));
//   causal mask: row = gen_index(S, axis 2), col = gen_index(S, axis 3),
//     keep = row >= col, S = keep ? S : -inf (binary select);
//   softmax: m = max over keys, e = exp(S - m), z = sum of e,
//     Stats = m + log(z), P = e / z (bf16);  O = P V (bf16).
// Stats is therefore exactly lse: the natural-log log-sum-exp of the scaled, masked
// scores, fp32, (B, NH, T, 1) -- the layout of lse -- so cuDNN writes lse directly.
// O is written as bf16 in the (B, T, C) layout (strides (TC, hs, C, 1)) and a second
// kernel converts it into out.
// The graph, the engine choice (heuristics mode A, then fallback) and the finalised
// execution plan are built once per shape, stream and handle and cached (the plan owns
// compiled kernels; building it can take a while, running it does not).
// Why it should beat variant 4: tensor-core bf16 matmuls inside a vendor-tuned fused
// kernel; the fp32 <-> bf16 conversions are two streaming passes over B*T*4C values.
// Limits: bf16 numeric class (inputs rounded to 8-bit mantissas, P rounded to bf16
// before P V); hs % 8 == 0 and hs <= 128 (cuDNN's head-size rule that also holds on
// sm_80); cuDNN's own workspace is only known once the plan exists: the declared
// workspace reserves a generous bound for it and the launch fails with a clear message
// if a plan ever asks for more. Cached plans live until the process ends.
#if !WB_EMU
#include <cuda_bf16.h>
#include <cudnn.h>
#endif

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/libraries.h"
#include "kernels/cuda/runtime.h"
#include "kernels/errors.h"
#include "kernels/ops/attention_forward.h"
#include "variants/attention_forward/common.cuh"

namespace wb::variants {
namespace {

constexpr int kMaxHeadSize = 128;
constexpr std::size_t kBf16Bytes = 2;  // sizeof(__nv_bfloat16)
constexpr std::size_t kAlign = 256;
// Bound for cuDNN's own workspace: 64 MiB plus 16 bytes per (b, h, t) row.
constexpr std::size_t kCudnnFixedBound = std::size_t(64) << 20;
constexpr std::size_t kCudnnPerRowBound = 16;

std::size_t round_up_bytes(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  std::size_t qkv16 = 0, o16 = 0, cudnn = 0;  // byte offsets into the workspace
  std::size_t cudnn_bound = 0, total = 0;
};

Layout layout(int64_t B, int64_t T, int64_t C, int64_t NH) {
  Layout w;
  const std::size_t btc = std::size_t(B) * T * C;
  w.qkv16 = 0;
  w.o16 = round_up_bytes(3 * btc * kBf16Bytes);
  w.cudnn = w.o16 + round_up_bytes(btc * kBf16Bytes);
  w.cudnn_bound = kCudnnFixedBound + kCudnnPerRowBound * std::size_t(B) * NH * T;
  w.total = w.cudnn + w.cudnn_bound;
  return w;
}

#if !WB_EMU
static_assert(sizeof(__nv_bfloat16) == kBf16Bytes);

// ---- conversion kernels (n4 = number of float4 groups; all counts are multiples of 4) ----

__global__ void to_bf16(__nv_bfloat16* dst, const float* src, int64_t n4) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 x = reinterpret_cast<const float4*>(src)[i];
  __nv_bfloat162* d = reinterpret_cast<__nv_bfloat162*>(dst) + 2 * i;
  d[0] = __floats2bfloat162_rn(x.x, x.y);
  d[1] = __floats2bfloat162_rn(x.z, x.w);
}

__global__ void from_bf16(float* dst, const __nv_bfloat16* src, int64_t n4) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const __nv_bfloat162* s = reinterpret_cast<const __nv_bfloat162*>(src) + 2 * i;
  const float2 a = __bfloat1622float2(s[0]);
  const float2 b = __bfloat1622float2(s[1]);
  reinterpret_cast<float4*>(dst)[i] = make_float4(a.x, a.y, b.x, b.y);
}

// ---- backend descriptors ----

class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) { WB_CHECK(cudnnBackendCreateDescriptor(type, &d_)); }
  ~Descriptor() {
    if (d_) cudnnBackendDestroyDescriptor(d_);  // errors on teardown are ignored
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return d_; }
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values) {
    WB_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values));
  }
  void set(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t value) {
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value);
  }
  void set(cudnnBackendAttributeName_t name, cudnnDataType_t value) { set(name, CUDNN_TYPE_DATA_TYPE, 1, &value); }
  void set(cudnnBackendAttributeName_t name, int64_t value) { set(name, CUDNN_TYPE_INT64, 1, &value); }
  void finalize() { WB_CHECK(cudnnBackendFinalize(d_)); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Dims = std::array<int64_t, 4>;

constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidScale = 6, kUidNegInf = 7;

// The operation graph under construction; owns every descriptor it creates.
class GraphBuilder {
 public:
  cudnnBackendDescriptor_t tensor(int64_t uid, cudnnDataType_t type, Dims dims, Dims strides, bool is_virtual,
                                  bool by_value = false) {
    Descriptor& t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, type);
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, int64_t(16));
    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    if (by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    t.finalize();
    return t.get();
  }
  cudnnBackendDescriptor_t virtual_tensor(cudnnDataType_t type, Dims dims, Dims strides) {
    return tensor(next_virtual_uid_++, type, dims, strides, true);
  }
  cudnnBackendDescriptor_t scalar(int64_t uid) {
    return tensor(uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  }

  // y = mode(x [, b] [, t]); axis >= 0 for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t math, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
                 int64_t axis = -1) {
    Descriptor& pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, math);
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, axis);
    pw.finalize();
    Descriptor& op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw.get());
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    if (t) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    const float one = 1.0f;  // y = mode(1 * x, 1 * b): set explicitly, for every mode
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
    op.finalize();
    ops_.push_back(op.get());
  }

  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c) {
    Descriptor& mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
    mm.finalize();
    Descriptor& op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm.get());
    op.finalize();
    ops_.push_back(op.get());
  }

  void reduction(cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    Descriptor& rd = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    rd.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    rd.set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT);
    rd.finalize();
    Descriptor& op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd.get());
    op.finalize();
    ops_.push_back(op.get());
  }

  // The finalised operation graph (owned by this builder).
  cudnnBackendDescriptor_t finish(cudnnHandle_t handle) {
    Descriptor& g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    g.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops_.size()), ops_.data());
    g.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    g.finalize();
    return g.get();
  }

  std::vector<std::unique_ptr<Descriptor>> take() { return std::move(owned_); }

 private:
  Descriptor& make(cudnnBackendDescriptorType_t type) {
    owned_.push_back(std::make_unique<Descriptor>(type));
    return *owned_.back();
  }

  std::vector<std::unique_ptr<Descriptor>> owned_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  int64_t next_virtual_uid_ = 100;
};

// A finalised execution plan and everything it was built from.
struct Plan {
  std::vector<std::unique_ptr<Descriptor>> owned;
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t workspace = 0;
};

// The SDPA graph of the header comment for one shape.
GraphBuilder build_graph(int64_t B, int64_t T, int64_t C, int64_t NH) {
  const int64_t hs = C / NH;
  GraphBuilder g;
  const Dims qv_dims{B, NH, T, hs}, qv_strides{T * 3 * C, hs, 3 * C, 1};
  const auto q = g.tensor(kUidQ, CUDNN_DATA_BFLOAT16, qv_dims, qv_strides, false);
  const auto kt = g.tensor(kUidK, CUDNN_DATA_BFLOAT16, {B, NH, hs, T}, {T * 3 * C, hs, 1, 3 * C}, false);
  const auto v = g.tensor(kUidV, CUDNN_DATA_BFLOAT16, qv_dims, qv_strides, false);
  const auto o = g.tensor(kUidO, CUDNN_DATA_BFLOAT16, {B, NH, T, hs}, {T * C, hs, C, 1}, false);
  const Dims row_dims{B, NH, T, 1}, row_strides{NH * T, T, 1, 1};
  const auto stats = g.tensor(kUidStats, CUDNN_DATA_FLOAT, row_dims, row_strides, false);
  const auto scale = g.scalar(kUidScale);
  const auto neg_inf = g.scalar(kUidNegInf);

  const Dims s_dims{B, NH, T, T}, s_strides{NH * T * T, T * T, T, 1};
  auto full = [&](cudnnDataType_t type) { return g.virtual_tensor(type, s_dims, s_strides); };
  auto per_row = [&] { return g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides); };

  const auto s = full(CUDNN_DATA_FLOAT);
  g.matmul(q, kt, s);
  const auto s_scaled = full(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, s, scale, nullptr, s_scaled);

  const auto row = full(CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s_scaled, nullptr, nullptr, row, 2);
  const auto col = full(CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s_scaled, nullptr, nullptr, col, 3);
  const auto keep = full(CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, nullptr, keep);
  const auto s_masked = full(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, s_scaled, neg_inf, keep, s_masked);

  const auto max = per_row();
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, s_masked, max);
  const auto shifted = full(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, s_masked, max, nullptr, shifted);
  const auto e = full(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, shifted, nullptr, nullptr, e);
  const auto sum = per_row();
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const auto log_sum = per_row();
  g.pointwise(CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, sum, nullptr, nullptr, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, max, log_sum, nullptr, stats);
  const auto p = full(CUDNN_DATA_BFLOAT16);  // the second matmul takes P in the i/o type
  g.pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, e, sum, nullptr, p);
  g.matmul(p, v, o);
  return g;
}

std::unique_ptr<Plan> build_plan(cudnnHandle_t handle, int64_t B, int64_t T, int64_t C, int64_t NH) {
  GraphBuilder g = build_graph(B, T, C, NH);
  const cudnnBackendDescriptor_t graph = g.finish(handle);
  auto plan = std::make_unique<Plan>();
  plan->owned = g.take();

  std::string tried;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    auto heur = std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur->set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    heur->set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (cudnnBackendFinalize(heur->get()) != CUDNN_STATUS_SUCCESS) continue;
    int64_t count = 0;
    if (cudnnBackendGetAttribute(heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                 nullptr) != CUDNN_STATUS_SUCCESS ||
        count <= 0)
      continue;
    std::vector<std::unique_ptr<Descriptor>> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(configs.back()->get());
    }
    int64_t returned = 0;
    WB_CHECK(cudnnBackendGetAttribute(heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                      &returned, raw.data()));
    for (int64_t i = 0; i < returned && i < count; ++i) {
      auto candidate = std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      candidate->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      candidate->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, raw[i]);
      const cudnnStatus_t status = cudnnBackendFinalize(candidate->get());
      if (status != CUDNN_STATUS_SUCCESS) {
        tried += std::string(tried.empty() ? "" : "; ") + cudnnGetErrorString(status);
        continue;
      }
      int64_t workspace = 0, n = 0;
      WB_CHECK(cudnnBackendGetAttribute(candidate->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                        &n, &workspace));
      plan->plan = candidate->get();
      plan->workspace = workspace;
      plan->owned.push_back(std::move(candidate));
      plan->owned.push_back(std::move(heur));
      for (auto& c : configs) plan->owned.push_back(std::move(c));
      return plan;
    }
  }
  throw Unsupported("attention_forward cuda/5: cuDNN has no engine for the SDPA graph at B=" + std::to_string(B) +
                    " T=" + std::to_string(T) + " C=" + std::to_string(C) + " NH=" + std::to_string(NH) +
                    (tried.empty() ? std::string(" (no engine configurations)") : " (" + tried + ")"));
}

// Plans by (device, stream id, handle, shape). The stream id is unique for the life of
// the process, so a handle re-created at the same address for a new stream never
// finds a plan made for a dead one. Never freed: destroying plans after the CUDA
// context is gone at exit is not safe, and there are only a few.
const Plan& plan_for(cudnnHandle_t handle, cudaStream_t stream, const AttentionForwardArgs& a) {
  using Key = std::tuple<int, unsigned long long, cudnnHandle_t, int, int, int, int>;
  static std::mutex mutex;
  static auto* cache = new std::map<Key, std::unique_ptr<Plan>>();
  int device = 0;
  unsigned long long stream_id = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaStreamGetId(stream, &stream_id));
  const Key key{device, stream_id, handle, a.B, a.T, a.C, a.NH};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(key);
  if (it == cache->end()) it = cache->emplace(key, build_plan(handle, a.B, a.T, a.C, a.NH)).first;
  return *it->second;
}

void launch(const AttentionForwardArgs& a, const Launch& l) {
  const cudaStream_t stream = cuda::stream(l);
  const int block = l.block_size();
  const Layout w = layout(a.B, a.T, a.C, a.NH);
  char* base = static_cast<char*>(l.workspace);
  auto* qkv16 = reinterpret_cast<__nv_bfloat16*>(base + w.qkv16);
  auto* o16 = reinterpret_cast<__nv_bfloat16*>(base + w.o16);
  const int64_t btc = int64_t(a.B) * a.T * a.C;

  cudnnHandle_t handle = cuda::libraries(l).cudnn();
  WB_CHECK(cudnnSetStream(handle, stream));
  const Plan& plan = plan_for(handle, stream, a);
  if (std::size_t(plan.workspace) > w.cudnn_bound || w.cudnn + std::size_t(plan.workspace) > l.workspace_bytes)
    throw BackendError("attention_forward cuda/5: the cuDNN plan needs " + std::to_string(plan.workspace) +
                       " bytes of workspace, more than the " + std::to_string(w.cudnn_bound) +
                       " bytes declared for it (raise kCudnnFixedBound)");

  const int64_t n4_in = 3 * btc / 4;  // hs % 8 == 0, so C and every count here are multiples of 4
  WB_LAUNCH(to_bf16, cuda::grid_for(n4_in, block), block, 0, stream, qkv16, a.qkv, n4_in);

  const float scale = 1.0f / std::sqrt(float(attention::head_size(a)));
  // cuDNN before 9.10 wants the lowest float rather than -inf as the masked value.
  const float neg_inf =
      cudnnGetVersion() >= 91000 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::lowest();
  const std::array<int64_t, 7> uids{kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale, kUidNegInf};
  std::array<void*, 7> pointers{qkv16,
                                qkv16 + a.C,
                                qkv16 + 2 * int64_t(a.C),
                                o16,
                                a.lse,
                                const_cast<float*>(&scale),
                                const_cast<float*>(&neg_inf)};
  void* workspace = base + w.cudnn;
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(uids.size()), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(pointers.size()), pointers.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  WB_CHECK(cudnnBackendExecute(handle, plan.plan, pack.get()));

  const int64_t n4_out = btc / 4;
  WB_LAUNCH(from_bf16, cuda::grid_for(n4_out, block), block, 0, stream, a.out, o16, n4_out);
}

#endif

}  // namespace

Variant attention_forward_cuda_5() {
  Variant v = Variant::of<AttentionForwardArgs>(WB_DEVICE_ONLY(launch));
  v.summary = "qkv to bf16, cuDNN backend-graph fused SDPA (causal, stats = lse), bf16 out back to fp32";
  v.numeric = NumericClass::bf16;
  v.not_emulated = "needs cuDNN";
  v.params = {block_size_param()};
  v.requirements = {{"C / NH % 8 == 0", [](const Shape& s) { return s.NH > 0 && (s.C / s.NH) % 8 == 0; }},
                    {"C / NH <= " + std::to_string(kMaxHeadSize),
                     [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHeadSize; }}};
  v.workspace = [](const Shape& s, const ParamValues&) { return layout(s.B, s.T, s.C, s.NH).total; };
  return v;
}

}  // namespace wb::variants
