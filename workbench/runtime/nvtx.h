#pragma once
// NVTX ranges (step, forward, backward, update, each layer, each op) so that Nsight
// Systems shows the trainer's structure; nothing in a build without CUDA.
#if WB_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace wb {

class NvtxRange {
 public:
#if WB_HAVE_CUDA
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
#else
  explicit NvtxRange(const char*) {}
#endif
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace wb
