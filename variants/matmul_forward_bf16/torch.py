"""PyTorch: nn.Linear on bf16 tensors, F.linear(inp, weight, bias).

Idea: one F.linear call on the bf16 operands: out = inp @ weight^T + bias, with the
bias optional (None is a linear layer without bias).

Why: exactly what a bf16 model's linear layer runs. The backends accumulate bf16
products in fp32 and add the bias in the GEMM's epilogue before the one rounding to
bf16 (cuBLAS(Lt) with CUBLAS_COMPUTE_32F on a GPU; oneDNN/mkldnn on the CPU, checked: at
most half an ulp from the exact value, with and without torch.compile), which is the
contract's single rounding.

Limits: none beyond the library's: one GEMM (addmm) kernel in eager and compile alike
(Inductor may pick a Triton template on a GPU with max-autotune; by default it calls
the same library GEMM). Writing F.linear(inp, weight) + bias instead would round the
product and then the sum: up to hundreds of ulps off where they cancel.
"""
import torch.nn.functional as F


def rung(t, s, k):
    return {"out": F.linear(t["inp"], t["weight"], t["bias"])}
