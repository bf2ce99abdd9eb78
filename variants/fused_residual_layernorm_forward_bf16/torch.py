"""PyTorch: residual add on bf16, then layernorm of the stored bf16 residual.

Idea: residual = inp1 + inp2 on bf16 tensors (widened, added and rounded once), then
the layernorm of that bf16 residual as layernorm_forward_bf16's rung: widened to fp32,
var_mean, rsqrt, affine, one cast of normed back to bf16; mean and rstd kept in fp32.

Why: what a GPT-2 block in bf16 writes (x = x + attn(...); h = ln(x)): the residual
stream lives in bf16, so the layernorm sees the residual as stored, which is also the
contract (the truth normalises the rounded residual, not the exact sum).

Limits: eager runs the add, then about seven layernorm kernels, re-reading the residual
from memory; torch.compile can fuse the add into the layernorm's row reduction (it
still writes the residual, which the op returns).
"""
import torch

EPS = 1e-5


def rung(t, s, k):
    residual = t["inp1"] + t["inp2"]  # bf16 + bf16: fp32 add, one rounding
    x = residual.float()
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    rstd = torch.rsqrt(var + EPS)
    normed = (x - mean) * rstd * t["weight"].float() + t["bias"].float()
    return {"residual": residual, "normed": normed.to(torch.bfloat16), "mean": mean.squeeze(-1),
            "rstd": rstd.squeeze(-1)}
