"""PyTorch: linear layer then tanh-GELU on bf16 storage, GELU taken from the fp32 pre.

Idea: one GEMM of the bf16 operands with an fp32 result, pre32 = inp @ weight^T + bias;
pre = bf16(pre32) and out = bf16(F.gelu(pre32, approximate="tanh")): both outputs
rounded once, out from the unrounded pre as the contract says. On a GPU the GEMM is
torch.mm(inp, weight^T, out_dtype=torch.float32) (bf16 tensor cores, fp32 output); on
the CPU, where PyTorch has no bf16 GEMM with an fp32 output, it is F.linear on fp32
copies of the operands.

Why: the natural bf16 user code, F.gelu(F.linear(inp, weight, bias)), rounds pre to
bf16 before the GELU; where the GELU is small and sloped (pre around -2), half an ulp
of pre becomes several ulps of out, which the contract (out within half an ulp of
bf16 beyond the fp32 twin's tolerance) does not allow. Keeping pre in fp32 is what a
user who wants the fused epilogue's numbers writes; the out_dtype GEMM is PyTorch's
form of cuBLAS GemmEx with bf16 inputs and an fp32 output.

Limits: on the CPU the GEMM runs in fp32 on widened copies (extra casts, no bf16
dot-product instructions); mm(out_dtype=) is CUDA/XPU-only in torch 2.11, and the
CUDA branch was not run here (no GPU in the session that wrote this). The bias is
added in fp32 after the GEMM on the GPU path (an extra pass, fused by compile).
Eager launches casts, the GEMM, gelu and two casts back; torch.compile fuses the
pointwise parts around the library GEMM.
"""
import torch
import torch.nn.functional as F


def rung(t, s, k):
    C = s["C"]
    inp, weight, bias = t["inp"], t["weight"], t["bias"]
    if inp.is_cuda:
        # bf16 x bf16 -> fp32 on tensor cores (torch >= 2.8, CUDA/XPU only)
        pre = torch.mm(inp.reshape(-1, C), weight.t(), out_dtype=torch.float32)
        pre = pre.reshape(*inp.shape[:-1], weight.shape[0])
        if bias is not None:
            pre = pre + bias.float()
    else:
        pre = F.linear(inp.float(), weight.float(), None if bias is None else bias.float())
    out = F.gelu(pre, approximate="tanh")
    return {"pre": pre.to(torch.bfloat16), "out": out.to(torch.bfloat16)}
