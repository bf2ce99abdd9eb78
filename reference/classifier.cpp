// CPU reference of the classifier ops: softmax_forward, crossentropy_forward,
// crossentropy_softmax_backward and fused_classifier. Rows hold Vp values of which
// the first V are real; the padding never takes part in a softmax.
#include <cmath>
#include <limits>
#include <vector>

#include "reference/reference.h"

namespace wb::reference {
namespace {

struct RowStats {
  double max;
  double sum;  // sum of exp(x - max) over the first V values
};

RowStats row_stats(const float* x, int64_t V) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < V; ++i) max = std::max(max, double(x[i]));
  double sum = 0;
  for (int64_t i = 0; i < V; ++i) sum += std::exp(x[i] - max);
  return {max, sum};
}

// Runs `row(r)` for each of the B*T rows of `a`, in parallel.
template <class Args, class Row>
void each_row(const Args& a, const Row& row) {
#pragma omp parallel for
  for (int64_t r = 0; r < int64_t(a.B) * a.T; ++r) row(r);
}

}  // namespace

void softmax_forward(const SoftmaxForwardArgs& a) {
  const int64_t V = a.V, Vp = a.Vp;
  each_row(a, [&](int64_t row) {
    const float* x = a.logits + row * Vp;
    float* p = a.probs + row * Vp;
    const RowStats st = row_stats(x, V);
    for (int64_t i = 0; i < V; ++i) p[i] = float(std::exp(x[i] - st.max) / st.sum);
    for (int64_t i = V; i < Vp; ++i) p[i] = 0.0f;
  });
}

void crossentropy_forward(const CrossentropyForwardArgs& a) {
  for (int64_t row = 0; row < int64_t(a.B) * a.T; ++row)
    a.losses[row] = float(-std::log(double(a.probs[row * a.Vp + a.targets[row]])));
}

void crossentropy_softmax_backward(const CrossentropySoftmaxBackwardArgs& a) {
  const int64_t V = a.V, Vp = a.Vp;
  each_row(a, [&](int64_t row) {
    const float* p = a.probs + row * Vp;
    float* d = a.dlogits + row * Vp;
    const double dloss = a.dlosses[row];
    for (int64_t i = 0; i < V; ++i) d[i] += float((p[i] - (i == a.targets[row] ? 1.0 : 0.0)) * dloss);
  });
}

void fused_classifier(const FusedClassifierArgs& a) {
  const int64_t V = a.V, Vp = a.Vp;
  each_row(a, [&](int64_t row) {
    float* x = a.logits + row * Vp;
    const int64_t target = a.targets[row];
    const RowStats st = row_stats(x, V);
    a.losses[row] = float(st.max + std::log(st.sum) - x[target]);
    for (int64_t i = 0; i < V; ++i) {
      const double p = std::exp(x[i] - st.max) / st.sum;
      x[i] = float((p - (i == target ? 1.0 : 0.0)) * a.dloss);
    }
    for (int64_t i = V; i < Vp; ++i) x[i] = 0.0f;
  });
}

// The bf16 port: the twin's arithmetic in double on the widened row, each dlogit rounded
// once (the row is widened first: it is overwritten as it goes).
void fused_classifier_bf16(const FusedClassifierBf16Args& a) {
  const int64_t V = a.V, Vp = a.Vp;
  each_row(a, [&](int64_t row) {
    bf16* x = a.logits + row * Vp;
    std::vector<float> w(V);
    for (int64_t i = 0; i < V; ++i) w[i] = to_float(x[i]);
    const int64_t target = a.targets[row];
    const RowStats st = row_stats(w.data(), V);
    a.losses[row] = float(st.max + std::log(st.sum) - w[target]);
    for (int64_t i = 0; i < V; ++i) {
      const double p = std::exp(w[i] - st.max) / st.sum;
      x[i] = to_bf16((p - (i == target ? 1.0 : 0.0)) * a.dloss);
    }
    for (int64_t i = V; i < Vp; ++i) x[i] = to_bf16(0.0f);
  });
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> classifier() {
  return {WB_REFERENCE(softmax_forward), WB_REFERENCE(crossentropy_forward),
          WB_REFERENCE(crossentropy_softmax_backward), WB_REFERENCE(fused_classifier),
          WB_REFERENCE_PORT(fused_classifier_bf16)};
}

}  // namespace wb::references
