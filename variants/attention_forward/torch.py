"""PyTorch: causal multi-head self-attention over the fused qkv, with each row's log-sum-exp.

Idea: split qkv into q, k, v and view them as (B, NH, T, hs); scores = q k^T / sqrt(hs)
with the future masked to -inf; lse = torch.logsumexp(scores) per row; the
probabilities exp(scores - lse) times v give the output, put back as (B, T, C).

Why: the contract stores lse (attention_backward recomputes the probabilities from
it), and F.scaled_dot_product_attention returns no lse through its public API, so
a PyTorch user who needs it writes attention by hand, as nanoGPT's non-flash path
does. Eager is that path's cost (batched GEMMs and a materialised T x T matrix per
head); torch.compile fuses the mask, logsumexp and exp, but not into a flash kernel.

Limits: memory O(B NH T^2) for the scores and probabilities; eager launches about
ten kernels. The mask is built each call (torch.ones(T, T).tril(), small). An
SDPA-based rung would compute out faster but then needs the scores again for lse.
"""
import math

import torch


def rung(t, s, k):
    B, T, C, NH = s["B"], s["T"], s["C"], s["NH"]
    hs = C // NH
    q, k_, v = (x.view(B, T, NH, hs).transpose(1, 2) for x in t["qkv"].split(C, dim=-1))
    scores = (q @ k_.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
    future = torch.ones(T, T, dtype=torch.bool, device=scores.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    p = torch.exp(scores - lse.unsqueeze(-1))
    out = (p @ v).transpose(1, 2).reshape(B, T, C)
    return {"out": out, "lse": lse}
