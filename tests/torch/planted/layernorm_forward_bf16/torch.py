"""Test only: a bf16 layernorm that returns its output in float32.

Idea: the correct arithmetic, with the final cast to bf16 forgotten.

Why: the values would pass a comparison; the contract stores bf16, and a rung that
returns float32 would have PyTorch's process write twice the bytes wb expects. The
server refuses it by dtype, and wb check must call it INCORRECT with the reason.

Limits: none; it is wrong on purpose.
"""
import torch


def rung(t, s, k):
    x = t["inp"].float()
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    rstd = torch.rsqrt(var + 1e-5)
    out = (x - mean) * rstd * t["weight"].float() + t["bias"].float()
    return {"out": out, "mean": mean.squeeze(-1), "rstd": rstd.squeeze(-1)}
