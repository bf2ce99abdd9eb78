"""PyTorch: layernorm of bf16 rows with fp32 statistics, output rounded once to bf16.

Idea: widen the row to fp32, take the biased variance and the mean with torch.var_mean,
rstd = rsqrt(var + 1e-5), then (x - mean) * rstd * weight + bias in fp32 and one cast
back to bf16. mean and rstd are returned in fp32 for the backward.

Why: F.layer_norm does not return its statistics, and the training step needs them; a
user who keeps them writes var_mean + rsqrt. Widening first keeps the reductions in
fp32 (as torch's own bf16 layer_norm kernel does internally) and rounds the output once,
as the contract asks.

Limits: eager launches about seven kernels (casts, var_mean, rsqrt, the affine chain,
the final cast); torch.compile fuses them into one or two row reductions plus the
pointwise tail.
"""
import torch

EPS = 1e-5


def rung(t, s, k):
    x = t["inp"].float()
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    rstd = torch.rsqrt(var + EPS)
    out = (x - mean) * rstd * t["weight"].float() + t["bias"].float()
    return {"out": out.to(torch.bfloat16), "mean": mean.squeeze(-1), "rstd": rstd.squeeze(-1)}
