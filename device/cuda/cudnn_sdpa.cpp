// cuDNN's fused scaled-dot-product attention (device/cuda/cudnn_sdpa.h says what the
// graphs compute): the backend descriptors, the two graphs, the engine choice, the
// plan caches and the execution, compiled once for the variants that use them.
#if WB_HAVE_CUDNN

#include "device/cuda/cudnn_sdpa.h"

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "base/errors.h"
#include "device/cuda/libraries.h"
#include "device/cuda/runtime.h"

namespace wb::cuda::sdpa {

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

namespace {

using Dims = std::array<int64_t, 4>;

constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidScale = 6, kUidNegInf = 7;
// The backward's own (K and V are declared transposed there: K^T and V^T).
constexpr int64_t kUidDO = 8, kUidDQ = 9, kUidDK = 10, kUidDV = 11, kUidDqAccumulator = 12, kUidRowSum = 13,
                  kUidOne = 14;

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

  // y = x seen through other dimensions and strides (a transpose here), possibly in
  // another data type.
  void reshape(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    Descriptor& op = make(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x);
    op.set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
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

// The operations of a graph whose results have the scores' shape (B, NH, T, T,
// row-major per head), most of both graphs: each writes a new virtual tensor of that
// shape, created just before its operation (the order the virtual uids follow).
class Scores {
 public:
  Scores(GraphBuilder& g, int64_t B, int64_t T, int64_t NH)
      : g_(g), dims_{B, NH, T, T}, strides_{NH * T * T, T * T, T, 1} {}

  // y = mode(x [, b] [, t]) of `type`, computed in `math`; axis >= 0 for GEN_INDEX.
  cudnnBackendDescriptor_t pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t type, cudnnDataType_t math,
                                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b = nullptr,
                                     cudnnBackendDescriptor_t t = nullptr, int64_t axis = -1) {
    const auto y = g_.virtual_tensor(type, dims_, strides_);
    g_.pointwise(mode, math, x, b, t, y, axis);
    return y;
  }
  // y = mode(x [, b]) in fp32.
  cudnnBackendDescriptor_t fp32(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x,
                                cudnnBackendDescriptor_t b = nullptr) {
    return pointwise(mode, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, x, b);
  }
  // y = a b, fp32.
  cudnnBackendDescriptor_t matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b) {
    const auto y = g_.virtual_tensor(CUDNN_DATA_FLOAT, dims_, strides_);
    g_.matmul(a, b, y);
    return y;
  }
  // The transpose of a scores tensor (the same memory order), bf16: what a reshape of
  // one into the i/o type of the next matmul writes.
  cudnnBackendDescriptor_t transposed_bf16() {
    return g_.virtual_tensor(CUDNN_DATA_BFLOAT16, dims_, {strides_[0], strides_[1], 1, dims_[3]});
  }

 private:
  GraphBuilder& g_;
  Dims dims_, strides_;
};

// The causal mask on the scores s: entries whose key comes after the query (column >
// row) become neg_inf.
inline cudnnBackendDescriptor_t causal_mask(Scores& scores, cudnnBackendDescriptor_t s,
                                            cudnnBackendDescriptor_t neg_inf) {
  const auto row =
      scores.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, CUDNN_DATA_INT32, s, nullptr, nullptr, 2);
  const auto col =
      scores.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, CUDNN_DATA_INT32, s, nullptr, nullptr, 3);
  const auto keep = scores.pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, CUDNN_DATA_BOOLEAN, row, col);
  return scores.pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, s, neg_inf, keep);
}

// The SDPA graph of the header comment for one shape.
inline GraphBuilder build_graph(int64_t B, int64_t T, int64_t C, int64_t NH) {
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

  Scores scores(g, B, T, NH);
  auto per_row = [&] { return g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides); };

  const auto s = scores.matmul(q, kt);
  const auto s_scaled = scores.fp32(CUDNN_POINTWISE_MUL, s, scale);

  const auto s_masked = causal_mask(scores, s_scaled, neg_inf);

  const auto max = per_row();
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, s_masked, max);
  const auto shifted = scores.fp32(CUDNN_POINTWISE_SUB, s_masked, max);
  const auto e = scores.fp32(CUDNN_POINTWISE_EXP, shifted);
  const auto sum = per_row();
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const auto log_sum = per_row();
  g.pointwise(CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, sum, nullptr, nullptr, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, max, log_sum, nullptr, stats);
  // the second matmul takes P in the i/o type
  const auto p = scores.pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, e, sum);
  g.matmul(p, v, o);
  return g;
}

// The SDPA backward graph of the header comment for one shape (the op order of
// cudnn-frontend's SDPA backward node, with neither bias, dropout nor padding mask).
inline GraphBuilder build_backward_graph(int64_t B, int64_t T, int64_t C, int64_t NH) {
  const int64_t hs = C / NH;
  GraphBuilder g;
  const Dims head_dims{B, NH, T, hs}, head_t_dims{B, NH, hs, T};
  const Dims in_qkv{T * 3 * C, hs, 3 * C, 1}, in_qkv_t{T * 3 * C, hs, 1, 3 * C};  // views of (dq)qkv
  const Dims in_out{T * C, hs, C, 1};                                             // views of out, dout
  const Dims row_dims{B, NH, T, 1}, row_strides{NH * T, T, 1, 1};

  const auto q = g.tensor(kUidQ, CUDNN_DATA_BFLOAT16, head_dims, in_qkv, false);
  const auto kt = g.tensor(kUidK, CUDNN_DATA_BFLOAT16, head_t_dims, in_qkv_t, false);
  const auto vt = g.tensor(kUidV, CUDNN_DATA_BFLOAT16, head_t_dims, in_qkv_t, false);
  const auto o = g.tensor(kUidO, CUDNN_DATA_BFLOAT16, head_dims, in_out, false);
  const auto d_o = g.tensor(kUidDO, CUDNN_DATA_BFLOAT16, head_dims, in_out, false);
  const auto stats = g.tensor(kUidStats, CUDNN_DATA_FLOAT, row_dims, row_strides, false);
  const auto dq = g.tensor(kUidDQ, CUDNN_DATA_BFLOAT16, head_dims, in_qkv, false);
  const auto dk = g.tensor(kUidDK, CUDNN_DATA_BFLOAT16, head_dims, in_qkv, false);
  const auto dv = g.tensor(kUidDV, CUDNN_DATA_BFLOAT16, head_dims, in_qkv, false);
  const auto dq_acc = g.tensor(kUidDqAccumulator, CUDNN_DATA_FLOAT, head_dims, {NH * T * hs, T * hs, hs, 1}, false);
  const auto row_sum = g.tensor(kUidRowSum, CUDNN_DATA_FLOAT, row_dims, row_strides, false);
  const auto scale = g.scalar(kUidScale);
  const auto neg_inf = g.scalar(kUidNegInf);
  const auto one = g.scalar(kUidOne);

  Scores scores(g, B, T, NH);
  auto per_row = [&] { return g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides); };

  // D = rowsum(dO * O), stored for the engine's use
  const auto do_o = g.virtual_tensor(CUDNN_DATA_FLOAT, head_dims, in_out);
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, d_o, o, nullptr, do_o);
  const auto do_o_sum = per_row();
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, do_o_sum);
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, do_o_sum, one, nullptr, row_sum);

  // P = exp(scale Q K^T - Stats), causal
  const auto s = scores.matmul(q, kt);
  const auto s_scaled = scores.fp32(CUDNN_POINTWISE_MUL, s, scale);
  const auto s_shifted = scores.fp32(CUDNN_POINTWISE_SUB, s_scaled, stats);
  const auto s_masked = causal_mask(scores, s_shifted, neg_inf);
  const auto p = scores.fp32(CUDNN_POINTWISE_EXP, s_masked);

  // dV = P^T dO
  const auto p_t = scores.transposed_bf16();
  g.reshape(p, p_t);
  g.matmul(p_t, d_o, dv);

  // dS = (dO V^T - D) * P * scale
  const auto dp = scores.matmul(d_o, vt);
  const auto dp_centered = scores.fp32(CUDNN_POINTWISE_SUB, dp, row_sum);
  const auto dp_p = scores.fp32(CUDNN_POINTWISE_MUL, dp_centered, p);
  const auto ds = scores.fp32(CUDNN_POINTWISE_MUL, dp_p, scale);

  // dK = dS^T Q
  const auto ds_t = scores.transposed_bf16();
  g.reshape(ds, ds_t);
  g.matmul(ds_t, q, dk);

  // dQ = dS K, accumulated in fp32, then converted
  const auto k = g.virtual_tensor(CUDNN_DATA_BFLOAT16, head_dims, in_qkv);
  g.reshape(kt, k);
  g.matmul(ds, k, dq_acc);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, CUDNN_DATA_FLOAT, dq_acc, nullptr, nullptr, dq);
  return g;
}

// An execution plan for the finished graph g: the first engine configuration that
// finalises, heuristics mode A first, then the fallback list. `what` names the graph
// in the error thrown when none does.
inline std::unique_ptr<Plan> plan_graph(cudnnHandle_t handle, GraphBuilder g, const char* what, int64_t B, int64_t T,
                                        int64_t C, int64_t NH, const char* who) {
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
  throw Unsupported(std::string(who) + ": cuDNN has no engine for the " + what + " at B=" + std::to_string(B) +
                    " T=" + std::to_string(T) + " C=" + std::to_string(C) + " NH=" + std::to_string(NH) +
                    (tried.empty() ? std::string(" (no engine configurations)") : " (" + tried + ")"));
}

inline std::unique_ptr<Plan> build_plan(cudnnHandle_t handle, int64_t B, int64_t T, int64_t C, int64_t NH,
                                        const char* who) {
  return plan_graph(handle, build_graph(B, T, C, NH), "SDPA graph", B, T, C, NH, who);
}

inline std::unique_ptr<Plan> build_backward_plan(cudnnHandle_t handle, int64_t B, int64_t T, int64_t C, int64_t NH,
                                                 const char* who) {
  return plan_graph(handle, build_backward_graph(B, T, C, NH), "SDPA backward graph", B, T, C, NH, who);
}

// Plans by (device, stream id, handle, shape), one cache per direction. The stream id
// is unique for the life of the process, so a handle re-created at the same address
// for a new stream never finds a plan made for a dead one. Never freed: destroying
// plans after the CUDA context is gone at exit is not safe, and there are only a few.
// `who` names the variant in the error thrown when cuDNN has no engine for the graph.
template <std::unique_ptr<Plan> (*Build)(cudnnHandle_t, int64_t, int64_t, int64_t, int64_t, const char*)>
const Plan& cached_plan(cudnnHandle_t handle, cudaStream_t stream, int B, int T, int C, int NH, const char* who) {
  using Key = std::tuple<int, unsigned long long, cudnnHandle_t, int, int, int, int>;
  static std::mutex mutex;  // one mutex and one cache per Build
  static auto* cache = new std::map<Key, std::unique_ptr<Plan>>();
  int device = 0;
  unsigned long long stream_id = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaStreamGetId(stream, &stream_id));
  const Key key{device, stream_id, handle, B, T, C, NH};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(key);
  if (it == cache->end()) it = cache->emplace(key, Build(handle, B, T, C, NH, who)).first;
  return *it->second;
}

// The plan, once it is known to need at most `room` bytes of cuDNN's own workspace.
const Plan& within(const Plan& plan, std::size_t room, const char* who) {
  if (std::size_t(plan.workspace) > room)
    throw BackendError(std::string(who) + ": the cuDNN plan needs " + std::to_string(plan.workspace) +
                       " bytes of workspace, more than the " + std::to_string(room) +
                       " bytes declared for it (raise kCudnnFixedBound)");
  return plan;
}

// Executes plan on the stream `handle` is bound to, with the variant pack that gives
// each tensor uid its data pointer (pointers[i] for uids[i]; cuDNN takes void*, inputs
// are only read) and cuDNN's own workspace.
template <std::size_t N>
void execute_pack(cudnnHandle_t handle, const Plan& plan, const std::array<int64_t, N>& uids,
                  std::array<void*, N>& pointers, void* workspace) {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(N), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(N), pointers.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  WB_CHECK(cudnnBackendExecute(handle, plan.plan, pack.get()));
}

// The value masked scores take: cuDNN before 9.10 wants the lowest float rather than
// -inf.
inline float masked_value() {
  return cudnnGetVersion() >= 91000 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::lowest();
}

}  // namespace

Plan::Plan() = default;
Plan::~Plan() = default;

Handle handle(const Launch& launch) {
  cudnnHandle_t h = libraries(launch).cudnn();
  WB_CHECK(cudnnSetStream(h, stream(launch)));
  return h;
}

int version() { return int(cudnnGetVersion()); }

const Plan& plan_for(cudnnHandle_t handle, cudaStream_t stream, int B, int T, int C, int NH, std::size_t room,
                     const char* who) {
  return within(cached_plan<build_plan>(handle, stream, B, T, C, NH, who), room, who);
}

const Plan& backward_plan_for(cudnnHandle_t handle, cudaStream_t stream, int B, int T, int C, int NH, std::size_t room,
                              const char* who) {
  return within(cached_plan<build_backward_plan>(handle, stream, B, T, C, NH, who), room, who);
}

// Runs the plan on the stream `handle` is bound to: Q, K and V are strided views of
// the bf16 qkv (B, T, 3C) at element offsets 0, C and 2C; O is written as bf16 in the
// (B, T, C) layout, Stats as fp32 into lse (B, NH, T); `workspace` holds at least
// plan.workspace bytes. The scale and the masked value are passed by value.
void execute(cudnnHandle_t handle, const Plan& plan, const __nv_bfloat16* qkv, __nv_bfloat16* o, float* lse, int C,
             int hs, void* workspace) {
  const float scale = 1.0f / std::sqrt(float(hs));
  const float neg_inf = masked_value();
  const std::array<int64_t, 7> uids{kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale, kUidNegInf};
  auto* q = const_cast<__nv_bfloat16*>(qkv);  // cuDNN's variant pack takes void*; inputs are only read
  std::array<void*, 7> pointers{
      q, q + C, q + 2 * int64_t(C), o, lse, const_cast<float*>(&scale), const_cast<float*>(&neg_inf)};
  execute_pack(handle, plan, uids, pointers, workspace);
}

// Runs a backward plan on `stream`, the stream `handle` is bound to: qkv, out and
// lse as the forward read and wrote them, dout (B, T, C), dqkv (B, T, 3C) written
// whole (dQ, dK, dV at element offsets 0, C and 2C). `workspace` holds
// backward_workspace_bound bytes laid out as that function says (the dQ accumulator,
// D, then at least plan.workspace bytes of cuDNN's own). Before cuDNN 9.6 the engine
// expects the dQ accumulator zeroed by its caller (cudnn-frontend does it so): done
// here then; later versions clear it themselves.
void execute_backward(cudnnHandle_t handle, cudaStream_t stream, const Plan& plan, const __nv_bfloat16* qkv,
                      const __nv_bfloat16* out, const float* lse, const __nv_bfloat16* dout, __nv_bfloat16* dqkv, int B,
                      int T, int C, int NH, void* workspace) {
  const float scale = 1.0f / std::sqrt(float(C / NH));
  const float neg_inf = masked_value();
  const float one = 1.0f;
  auto* bytes = static_cast<unsigned char*>(workspace);
  void* dq_accumulator = bytes;
  void* row_sum = bytes + dq_accumulator_bytes(B, T, C);
  void* cudnn_workspace = bytes + dq_accumulator_bytes(B, T, C) + row_sum_bytes(B, T, NH);
  if (cudnnGetVersion() < 90600)
    WB_CHECK(cudaMemsetAsync(dq_accumulator, 0, sizeof(float) * std::size_t(B) * T * C, stream));

  const std::array<int64_t, 14> uids{kUidQ,      kUidK,     kUidV,      kUidO,  kUidStats,
                                     kUidDO,     kUidDQ,    kUidDK,     kUidDV, kUidDqAccumulator,
                                     kUidRowSum, kUidScale, kUidNegInf, kUidOne};
  // cuDNN's variant pack takes void*; the inputs are only read
  auto* q = const_cast<__nv_bfloat16*>(qkv);
  const int64_t c = C;
  std::array<void*, 14> pointers{q,
                                 q + c,
                                 q + 2 * c,
                                 const_cast<__nv_bfloat16*>(out),
                                 const_cast<float*>(lse),
                                 const_cast<__nv_bfloat16*>(dout),
                                 dqkv,
                                 dqkv + c,
                                 dqkv + 2 * c,
                                 dq_accumulator,
                                 row_sum,
                                 const_cast<float*>(&scale),
                                 const_cast<float*>(&neg_inf),
                                 const_cast<float*>(&one)};
  execute_pack(handle, plan, uids, pointers, cudnn_workspace);
}

}  // namespace wb::cuda::sdpa

#endif  // WB_HAVE_CUDNN
