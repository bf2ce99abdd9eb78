// CPU reference of layernorm_forward, layernorm_backward and
// fused_residual_layernorm_forward.
#include <cmath>
#include <vector>

#include "reference/reference.h"

namespace wb::reference {
namespace {

// Normalises one row; statistics in double, the biased variance as PyTorch uses.
void normalize_row(const float* x, const float* weight, const float* bias, int64_t C, float* out, float* mean,
                   float* rstd) {
  double sum = 0;
  for (int64_t c = 0; c < C; ++c) sum += x[c];
  const double m = sum / C;
  double var = 0;
  for (int64_t c = 0; c < C; ++c) var += (x[c] - m) * (x[c] - m);
  const double s = 1.0 / std::sqrt(var / C + double(kLayernormEps));
  for (int64_t c = 0; c < C; ++c) out[c] = float((x[c] - m) * s * weight[c] + bias[c]);
  *mean = float(m);
  *rstd = float(s);
}

}  // namespace

void layernorm_forward(const LayernormForwardArgs& a) {
  const int64_t C = a.C;
#pragma omp parallel for
  for (int64_t row = 0; row < int64_t(a.B) * a.T; ++row)
    normalize_row(a.inp + row * C, a.weight, a.bias, C, a.out + row * C, a.mean + row, a.rstd + row);
}

namespace {

// Normalises one stored bf16 row: the row widened, the statistics in double as
// normalize_row, each output rounded once from double to bf16.
void normalize_bf16_row(const bf16* x, const std::vector<double>& w, const std::vector<double>& b, int64_t C, bf16* out,
                        float* mean, float* rstd) {
  double sum = 0;
  for (int64_t c = 0; c < C; ++c) sum += to_float(x[c]);
  const double m = sum / C;
  double var = 0;
  for (int64_t c = 0; c < C; ++c) var += (to_float(x[c]) - m) * (to_float(x[c]) - m);
  const double s = 1.0 / std::sqrt(var / C + double(kLayernormEps));
  for (int64_t c = 0; c < C; ++c) out[c] = to_bf16((to_float(x[c]) - m) * s * w[c] + b[c]);
  *mean = float(m);
  *rstd = float(s);
}

std::vector<double> widened(const bf16* x, int64_t n) {
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = to_float(x[i]);
  return out;
}

}  // namespace

// The bf16 port of layernorm_forward.
void layernorm_forward_bf16(const LayernormForwardBf16Args& a) {
  const int64_t C = a.C;
  const std::vector<double> w = widened(a.weight, C), b = widened(a.bias, C);
#pragma omp parallel for
  for (int64_t row = 0; row < int64_t(a.B) * a.T; ++row)
    normalize_bf16_row(a.inp + row * C, w, b, C, a.out + row * C, a.mean + row, a.rstd + row);
}

// The port: the residual's fp32 sum rounded once (exact before the rounding: two bf16
// add exactly in fp32 unless 2^16 apart, and then the smaller is below half an ulp of
// the larger), then the layernorm of that stored row as layernorm_forward_bf16's.
void fused_residual_layernorm_forward_bf16(const FusedResidualLayernormForwardBf16Args& a) {
  const int64_t C = a.C;
  const std::vector<double> w = widened(a.weight, C), b = widened(a.bias, C);
#pragma omp parallel for
  for (int64_t row = 0; row < int64_t(a.B) * a.T; ++row) {
    bf16* residual = a.residual + row * C;
    for (int64_t c = 0; c < C; ++c)
      residual[c] = to_bf16(to_float(a.inp1[row * C + c]) + to_float(a.inp2[row * C + c]));
    normalize_bf16_row(residual, w, b, C, a.normed + row * C, a.mean + row, a.rstd + row);
  }
}

// Its truth, on the widened tensors: the residual rounded to a bf16 value (the stored
// one), the layernorm of it as the fp32 reference's, normed left unrounded.
void fused_residual_layernorm_forward_bf16_truth(const TensorTable& t) {
  const Shape& s = t.shape();
  const int64_t C = s.C;
  const float *inp1 = t.f32("inp1"), *inp2 = t.f32("inp2"), *weight = t.f32("weight"), *bias = t.f32("bias");
  float *residual = t.f32("residual"), *normed = t.f32("normed"), *mean = t.f32("mean"), *rstd = t.f32("rstd");
#pragma omp parallel for
  for (int64_t row = 0; row < s.B * s.T; ++row) {
    for (int64_t c = 0; c < C; ++c) residual[row * C + c] = to_float(to_bf16(inp1[row * C + c] + inp2[row * C + c]));
    normalize_row(residual + row * C, weight, bias, C, normed + row * C, mean + row, rstd + row);
  }
}

void fused_residual_layernorm_forward(const FusedResidualLayernormForwardArgs& a) {
  const int64_t C = a.C;
#pragma omp parallel for
  for (int64_t row = 0; row < int64_t(a.B) * a.T; ++row) {
    float* residual = a.residual + row * C;
    for (int64_t c = 0; c < C; ++c) residual[c] = a.inp1[row * C + c] + a.inp2[row * C + c];
    normalize_row(residual, a.weight, a.bias, C, a.normed + row * C, a.mean + row, a.rstd + row);
  }
}

void layernorm_backward(const LayernormBackwardArgs& a) {
  const int64_t C = a.C;
  const int64_t rows = int64_t(a.B) * a.T;
#pragma omp parallel for
  for (int64_t row = 0; row < rows; ++row) {
    const float* x = a.inp + row * C;
    const float* dout = a.dout + row * C;
    const double mean = a.mean[row], rstd = a.rstd[row];
    double g_mean = 0, gn_mean = 0;  // mean over C of weight*dout, and of weight*dout*norm
    for (int64_t c = 0; c < C; ++c) {
      const double n = (x[c] - mean) * rstd;
      const double g = double(a.weight[c]) * dout[c];
      g_mean += g;
      gn_mean += g * n;
    }
    g_mean /= C;
    gn_mean /= C;
    for (int64_t c = 0; c < C; ++c) {
      const double n = (x[c] - mean) * rstd;
      const double g = double(a.weight[c]) * dout[c];
      a.dinp[row * C + c] += float((g - g_mean - n * gn_mean) * rstd);
    }
  }
  // dweight and dbias reduce over rows: parallel over channels.
#pragma omp parallel for
  for (int64_t c = 0; c < C; ++c) {
    double dw = 0, db = 0;
    for (int64_t row = 0; row < rows; ++row) {
      const double n = (a.inp[row * C + c] - double(a.mean[row])) * a.rstd[row];
      dw += n * a.dout[row * C + c];
      db += a.dout[row * C + c];
    }
    a.dweight[c] += float(dw);
    a.dbias[c] += float(db);
  }
}

// The bf16 port: the fp32 reference's sums in double on the widened tensors, each
// accumulated gradient rounded once from (old + sum).
void layernorm_backward_bf16(const LayernormBackwardBf16Args& a) {
  const int64_t C = a.C;
  const int64_t rows = int64_t(a.B) * a.T;
  const std::vector<double> weight = widened(a.weight, C);
#pragma omp parallel for
  for (int64_t row = 0; row < rows; ++row) {
    const bf16* x = a.inp + row * C;
    const bf16* dout = a.dout + row * C;
    const double mean = a.mean[row], rstd = a.rstd[row];
    double g_mean = 0, gn_mean = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double g = weight[c] * to_float(dout[c]);
      g_mean += g;
      gn_mean += g * (to_float(x[c]) - mean) * rstd;
    }
    g_mean /= C;
    gn_mean /= C;
    for (int64_t c = 0; c < C; ++c) {
      const double n = (to_float(x[c]) - mean) * rstd;
      const double g = weight[c] * to_float(dout[c]);
      bf16& d = a.dinp[row * C + c];
      d = to_bf16(to_float(d) + (g - g_mean - n * gn_mean) * rstd);
    }
  }
#pragma omp parallel for
  for (int64_t c = 0; c < C; ++c) {
    double dw = 0, db = 0;
    for (int64_t row = 0; row < rows; ++row) {
      const double d = to_float(a.dout[row * C + c]);
      dw += (to_float(a.inp[row * C + c]) - double(a.mean[row])) * a.rstd[row] * d;
      db += d;
    }
    a.dweight[c] = to_bf16(to_float(a.dweight[c]) + dw);
    a.dbias[c] = to_bf16(to_float(a.dbias[c]) + db);
  }
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> layernorm() {
  return {WB_REFERENCE(layernorm_forward),
          WB_REFERENCE(layernorm_backward),
          WB_REFERENCE(fused_residual_layernorm_forward),
          WB_REFERENCE_PORT(layernorm_forward_bf16),
          WB_REFERENCE_PORT(layernorm_backward_bf16),
          WB_REFERENCE_PORT_WITH_TRUTH(fused_residual_layernorm_forward_bf16)};
}

}  // namespace wb::references
