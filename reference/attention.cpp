// CPU reference of attention_forward and attention_backward: one (batch, head) at a
// time, every row of scores materialised in double.
#include <cmath>
#include <limits>
#include <vector>

#include "reference/reference.h"

namespace wb::reference {
namespace {

// Views of one head of the fused qkv (B, T, 3C) and of a (B, T, C) tensor.
struct Head {
  int64_t T, C, hs, b, h;
  int64_t qkv_at(int64_t t, int part) const { return (b * T + t) * 3 * C + part * C + h * hs; }
  int64_t out_at(int64_t t) const { return (b * T + t) * C + h * hs; }
};

template <class T>
double score(const T* qkv, const Head& hd, int64_t t, int64_t t2, double scale) {
  const T* q = qkv + hd.qkv_at(t, 0);
  const T* k = qkv + hd.qkv_at(t2, 1);
  double dot = 0;
  for (int64_t i = 0; i < hd.hs; ++i) dot += value(q[i]) * value(k[i]);
  return dot * scale;
}

// Runs body(hd, scale) for every (batch, head) of the args' shape (either storage),
// the heads in parallel; scale is the scores' 1/sqrt(head size).
template <class Args, class Body>
void for_each_head(const Args& a, const Body& body) {
  const int64_t B = a.B, NH = a.NH, hs = int64_t(a.C) / NH;
  const double scale = 1.0 / std::sqrt(double(hs));
#pragma omp parallel for collapse(2)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h) body(Head{a.T, a.C, hs, b, h}, scale);
}

// The forward pass on either storage (AttentionForwardArgs or AttentionForwardBf16Args).
template <class Args>
void forward(const Args& a) {
  const int64_t T = a.T, NH = a.NH;
  for_each_head(a, [&](const Head& hd, double scale) {
    const int64_t hs = hd.hs;
    std::vector<double> s(T), acc(hs);
    for (int64_t t = 0; t < T; ++t) {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t t2 = 0; t2 <= t; ++t2) {
        s[t2] = score(a.qkv, hd, t, t2, scale);
        max = std::max(max, s[t2]);
      }
      double sum = 0;
      for (int64_t t2 = 0; t2 <= t; ++t2) sum += std::exp(s[t2] - max);
      const double lse = max + std::log(sum);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t t2 = 0; t2 <= t; ++t2) {
        const double p = std::exp(s[t2] - lse);
        const auto* v = a.qkv + hd.qkv_at(t2, 2);
        for (int64_t i = 0; i < hs; ++i) acc[i] += p * value(v[i]);
      }
      for (int64_t i = 0; i < hs; ++i) store(a.out[hd.out_at(t) + i], acc[i]);
      a.lse[(hd.b * NH + hd.h) * T + t] = float(lse);
    }
  });
}

// The backward pass on either storage.
template <class Args>
void backward(const Args& a) {
  const int64_t T = a.T, NH = a.NH;
  for_each_head(a, [&](const Head& hd, double scale) {
    const int64_t hs = hd.hs;
    std::vector<double> dq(T * hs, 0.0), dk(T * hs, 0.0), dv(T * hs, 0.0);
    for (int64_t t = 0; t < T; ++t) {
      const auto* dout = a.dout + hd.out_at(t);
      const auto* out = a.out + hd.out_at(t);
      const double lse = a.lse[(hd.b * NH + hd.h) * T + t];
      double D = 0;  // dout_t . out_t = sum over t2 of p * (dout_t . v_t2)
      for (int64_t i = 0; i < hs; ++i) D += value(dout[i]) * value(out[i]);
      for (int64_t t2 = 0; t2 <= t; ++t2) {
        const double p = std::exp(score(a.qkv, hd, t, t2, scale) - lse);
        const auto* v = a.qkv + hd.qkv_at(t2, 2);
        double dp = 0;
        for (int64_t i = 0; i < hs; ++i) dp += value(dout[i]) * value(v[i]);
        const double ds = p * (dp - D) * scale;
        const auto* q = a.qkv + hd.qkv_at(t, 0);
        const auto* k = a.qkv + hd.qkv_at(t2, 1);
        for (int64_t i = 0; i < hs; ++i) {
          dv[t2 * hs + i] += p * value(dout[i]);
          dq[t * hs + i] += ds * value(k[i]);
          dk[t2 * hs + i] += ds * value(q[i]);
        }
      }
    }
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t i = 0; i < hs; ++i) {
        store(a.dqkv[hd.qkv_at(t, 0) + i], dq[t * hs + i]);
        store(a.dqkv[hd.qkv_at(t, 1) + i], dk[t * hs + i]);
        store(a.dqkv[hd.qkv_at(t, 2) + i], dv[t * hs + i]);
      }
    }
  });
}

}  // namespace

void attention_forward(const AttentionForwardArgs& a) { forward(a); }
void attention_backward(const AttentionBackwardArgs& a) { backward(a); }
// The bf16 ports: the same arithmetic in double on the widened values, each output
// rounded once.
void attention_forward_bf16(const AttentionForwardBf16Args& a) { forward(a); }
void attention_backward_bf16(const AttentionBackwardBf16Args& a) { backward(a); }

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> attention() {
  return {WB_REFERENCE(attention_forward), WB_REFERENCE(attention_backward), WB_REFERENCE_PORT(attention_forward_bf16),
          WB_REFERENCE_PORT(attention_backward_bf16)};
}

}  // namespace wb::references
