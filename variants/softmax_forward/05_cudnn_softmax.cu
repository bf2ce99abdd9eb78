// softmax_forward, CUDA variant 5: cuDNN's softmax.
//
// Idea: describe the logits as B*T instances of V values with a row stride of Vp (a
// 4-d tensor N = B*T, C = V, H = W = 1, strides Vp, 1, 1, 1), let cudnnSoftmaxForward
// (accurate algorithm: the row maximum is subtracted; instance mode: over C*H*W of
// each n) write the first V columns of every row through the same strided
// descriptor, then zero the padding columns V..Vp with one strided
// cudaMemset2DAsync.
// Why: the vendor's kernel, the yardstick for the hand-written ones.
// Limits: two launches (softmax, then the padding memset); cuDNN chooses its own
// kernel and launch configuration, so no block size is exposed; its descriptors take
// int sizes and strides, so B*T*Vp must stay below 2^31. The descriptor is created
// and destroyed on every launch (host work only, a few microseconds).
#include <climits>
#include <stdexcept>

#include "contract/ops/softmax_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/libraries.h"
#include "device/cuda/library_rung.h"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

#if !WB_EMU  // the emulator cannot run it (Variant::not_emulated): the GPU build only

// Owns a cuDNN tensor descriptor for the duration of one launch.
class TensorDescriptor {
 public:
  TensorDescriptor() { WB_CHECK(cudnnCreateTensorDescriptor(&desc_)); }
  ~TensorDescriptor() { cudnnDestroyTensorDescriptor(desc_); }
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

void launch(const SoftmaxForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  TensorDescriptor desc;
  // N = rows, C = V, H = W = 1; consecutive rows Vp floats apart, columns adjacent.
  WB_CHECK(cudnnSetTensor4dDescriptorEx(desc.get(), CUDNN_DATA_FLOAT, rows, a.V, 1, 1, a.Vp, 1, 1, 1));
  const float alpha = 1.0f, beta = 0.0f;  // beta = 0: probs is written, never read
  WB_CHECK(cudnnSoftmaxForward(cuda::libraries(l).cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &alpha,
                               desc.get(), a.logits, &beta, desc.get(), a.probs));
  if (a.Vp > a.V) {
    // The padding of every row: rows x (Vp - V) floats, a pitch of Vp floats apart.
    WB_CHECK(cudaMemset2DAsync(a.probs + a.V, size_t(a.Vp) * sizeof(float), 0, size_t(a.Vp - a.V) * sizeof(float),
                               size_t(rows), cuda::stream(l)));
  }
}

#endif

}  // namespace

Variant softmax_forward_cuda_5() {
  Variant v = cuda::library_rung<SoftmaxForwardArgs>(
      WB_DEVICE_ONLY(launch), "cuDNN",
      "cudnnSoftmaxForward over a descriptor with row stride Vp, then a 2-d memset of the padding");
  v.requirements = {{"B*T*Vp < 2^31", [](const Shape& s) { return s.B * s.T * s.Vp < (int64_t(1) << 31); }}};
  return v;
}

}  // namespace wb::variants
