"""PyTorch: residual add then layer norm, keeping the sum, the normalised output and its statistics.

Idea: residual = inp1 + inp2; torch.var_mean gives each row's mean and biased
variance, rstd = rsqrt(var + 1e-5); F.layer_norm normalises the residual.

Why: what a PyTorch user writes for a pre-LN block's "x = x + f(x); h = ln(x)"
when the statistics are kept for the backward; eager runs the add and the layer
norm separately (the unfused baseline), torch.compile fuses the add into the
normalisation, which is what this op's hand-written kernels do.

Limits: eager launches about five kernels (add, var_mean, add + rsqrt, layer_norm)
and reads the residual from memory twice more; the statistics are computed twice
(F.layer_norm's own are not public).
"""
import torch
import torch.nn.functional as F

EPS = 1e-5


def rung(t, s, k):
    residual = t["inp1"] + t["inp2"]
    var, mean = torch.var_mean(residual, dim=-1, correction=0)
    rstd = torch.rsqrt(var + EPS)
    normed = F.layer_norm(residual, (s["C"],), t["weight"], t["bias"], EPS)
    return {"residual": residual, "normed": normed, "mean": mean, "rstd": rstd}
