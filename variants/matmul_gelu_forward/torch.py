"""PyTorch: linear layer then GELU (tanh), keeping both the pre-activation and the output.

Idea: pre = F.linear(inp, weight, bias); out = F.gelu(pre, approximate="tanh"). A
missing bias (None) is F.linear without one.

Why: GPT-2's MLP up-projection as a PyTorch user writes it; the pre-activation is
kept because GELU's backward needs it. Eager runs the GEMM and a separate GELU
pass over its output; torch.compile may fuse the GELU into the GEMM's epilogue (its
Triton template) or keep cuBLAS plus one fused elementwise kernel, the comparison
for a hand-written GEMM with a GELU epilogue.

Limits: eager launches two kernels and re-reads pre from memory for the GELU.
"""
import torch.nn.functional as F


def rung(t, s, k):
    pre = F.linear(t["inp"], t["weight"], t.get("bias"))
    return {"pre": pre, "out": F.gelu(pre, approximate="tanh")}
