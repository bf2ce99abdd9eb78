"""PyTorch: causal attention backward, dqkv from dout, qkv, the forward's out and lse.

Idea: the explicit backward of softmax attention, probabilities recomputed from lse:
p = exp(q k^T / sqrt(hs) - lse) (0 in the future), D = rowsum(dout * out),
dp = dout v^T, ds = p (dp - D), dq = ds k / sqrt(hs), dk = ds^T q / sqrt(hs),
dv = p^T dout; the three are concatenated back into the (B, T, 3C) layout of qkv.

Why: what a user writes in a custom autograd.Function's backward for attention whose
forward saved lse (the flash-attention recipe, written with batched GEMMs). Eager is
that path's cost; torch.compile fuses the elementwise parts between the GEMMs.

Limits: materialises the (B, NH, T, T) probabilities and their gradient; eager
launches about fifteen kernels; dqkv is written (every element) by a final cat.
"""
import math

import torch


def rung(t, s, k):
    B, T, C, NH = s["B"], s["T"], s["C"], s["NH"]
    hs = C // NH
    scale = 1.0 / math.sqrt(hs)
    heads = lambda x: x.view(B, T, NH, hs).transpose(1, 2)  # noqa: E731
    q, k_, v = (heads(x) for x in t["qkv"].split(C, dim=-1))
    dout, out = heads(t["dout"]), heads(t["out"])
    scores = (q @ k_.transpose(-2, -1)) * scale
    future = torch.ones(T, T, dtype=torch.bool, device=scores.device).triu(1)
    p = torch.exp(scores.masked_fill(future, float("-inf")) - t["lse"].unsqueeze(-1))
    D = (dout * out).sum(-1, keepdim=True)
    ds = p * (dout @ v.transpose(-2, -1) - D)
    dq = (ds @ k_) * scale
    dk = (ds.transpose(-2, -1) @ q) * scale
    dv = p.transpose(-2, -1) @ dout
    dqkv = torch.cat([x.transpose(1, 2).reshape(B, T, C) for x in (dq, dk, dv)], dim=-1)
    return {"dqkv": dqkv}
