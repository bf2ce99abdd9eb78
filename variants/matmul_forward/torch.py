"""PyTorch: linear layer, out = inp @ weight^T + bias.

Idea: F.linear(inp, weight, bias) on the (B, T, C) input and the (OC, C) weight;
a missing bias (None) is F.linear without one.

Why: every projection in GPT-2 as a PyTorch user writes it; on the GPU eager calls
cuBLAS (addmm, bias added by the GEMM's epilogue or beta=1), torch.compile picks
cuBLAS or its own Triton GEMM template (max-autotune aside), so this is the vendor
library baseline for the hand-written GEMM ladder.

Limits: eager launches one GEMM (cuBLAS may choose TF32 only if the user allows it:
torch.backends.cuda.matmul.allow_tf32 is left at PyTorch's default, off, so the
contract's fp32 tolerance holds).
"""
import torch.nn.functional as F


def rung(t, s, k):
    return {"out": F.linear(t["inp"], t["weight"], t.get("bias"))}
