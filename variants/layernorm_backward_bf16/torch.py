"""PyTorch: layernorm backward on bf16 storage from the saved fp32 mean and rstd.

Idea: the explicit backward of a custom autograd.Function, in fp32 on the widened
tensors: xhat = (x - mean) * rstd, g = weight * dout,
dinp += rstd * (g - mean_C(g) - xhat * mean_C(g * xhat)), dweight += sum_rows(dout * xhat),
dbias += sum_rows(dout); each accumulated gradient rounded to bf16 once, from old + sum.

Why: the formula a user writes for LayerNorm's backward when the forward saved mean and
rstd; widening to fp32 keeps the row and column sums from rounding at every step on
bf16 storage, and the accumulation old + contribution is rounded once as the contract
says.

Limits: eager launches on the order of fifteen kernels and materialises xhat, g and
their products as (B, T, C) fp32 temporaries; torch.compile fuses them into a row
reduction, a column reduction and the pointwise updates.
"""
import torch


def rung(t, s, k):
    C = s["C"]
    x = t["inp"].float()
    dout = t["dout"].float()
    mean = t["mean"].unsqueeze(-1)
    rstd = t["rstd"].unsqueeze(-1)
    xhat = (x - mean) * rstd
    g = dout * t["weight"].float()
    dx = (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True)) * rstd
    dinp = t["dinp"].float() + dx
    dweight = t["dweight"].float() + (dout * xhat).reshape(-1, C).sum(0)
    dbias = t["dbias"].float() + dout.reshape(-1, C).sum(0)
    bf16 = torch.bfloat16
    return {"dinp": dinp.to(bf16), "dweight": dweight.to(bf16), "dbias": dbias.to(bf16)}
