"""PyTorch: token plus position embedding on bf16 tables.

Idea: gather the token rows of wte with the int32 ids (widened to int64 for indexing)
and add wpe, broadcast over the batch, as nn.Embedding users write it.

Why: this is the whole embedding step of a bf16 GPT-2 in PyTorch. A bf16 + bf16 add
widens both operands to fp32 and rounds the sum once (eager and Inductor alike), which
is exactly the contract's single rounding, so no explicit widening is needed.

Limits: eager runs the gather and the add as two kernels with a materialised
(B, T, C) gathered tensor in between; torch.compile fuses them into one.
"""
import torch


def rung(t, s, k):
    tokens = t["inp"].long()  # indexing wants int64
    return {"out": t["wte"][tokens] + t["wpe"].unsqueeze(0)}
