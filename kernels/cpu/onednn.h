#pragma once
// The oneDNN CPU engine and stream the CPU rungs built on oneDNN share, made once per
// process (oneDNN's primitive cache then makes a primitive built per call a lookup).
#include <oneapi/dnnl/dnnl.hpp>

namespace wb::cpu {

struct OneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

inline OneDnn& onednn() {
  static OneDnn instance;
  return instance;
}

}  // namespace wb::cpu
