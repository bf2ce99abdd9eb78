"""PyTorch: layer norm over C, with the mean and 1/std it saves.

Idea: torch.var_mean gives each row's mean and (biased) variance in one reduction;
rstd = rsqrt(var + 1e-5); F.layer_norm then normalises, scales and shifts.

Why: F.layer_norm is the call a PyTorch user makes, but it does not hand back the
statistics the contract also stores (for layernorm_backward); a user writing a
custom autograd.Function's forward gets them with var_mean, the public reduction for
exactly this. torch.compile fuses both reductions and the elementwise tail.

Limits: eager launches about four kernels (var_mean, add + rsqrt, layer_norm) and
reads the input twice; the statistics are computed twice (once inside F.layer_norm,
whose own mean/rstd are not public). eps is GPT-2's 1e-5, fixed here as in the contract.
"""
import torch
import torch.nn.functional as F

EPS = 1e-5


def rung(t, s, k):
    x = t["inp"]
    var, mean = torch.var_mean(x, dim=-1, correction=0)
    rstd = torch.rsqrt(var + EPS)
    out = F.layer_norm(x, (s["C"],), t["weight"], t["bias"], EPS)
    return {"out": out, "mean": mean, "rstd": rstd}
