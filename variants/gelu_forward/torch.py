"""PyTorch: GELU (tanh approximation) over every element.

Idea: one call, F.gelu(x, approximate="tanh"), on the float32 tensor.

Why: it is exactly what a PyTorch user writes for GPT-2's activation; eager runs
PyTorch's own elementwise GELU kernel, torch.compile generates a fused one, so both
are the library's best effort at a read-once, write-once elementwise op.

Limits: eager launches one kernel. It allocates the output (the contract's out is
returned, not written in place).
"""
import torch.nn.functional as F


def rung(t, s, k):
    return {"out": F.gelu(t["inp"], approximate="tanh")}
