"""PyTorch: L2 norm of the bf16 gradients, accumulated and returned in fp32.

Idea: on a GPU, torch.linalg.vector_norm over all N gradients with dtype=torch.float32,
so that the squares are summed in fp32; on the CPU, the gradients widened to fp32, the
sum of their squares (torch.sum), then its square root; reshaped to the op's (1,) output.

Why: the norm clip_grad_norm_ takes; asking for the fp32 dtype is what a bf16 user
does to keep a sum of millions of squares from stalling in bf16 (the contract's out
is fp32). On the CPU vector_norm's float32 reduction loses accuracy with N (wb check at
N=4941696: relative error 1.1e-4 against a tolerance of 1e-4; global_norm/torch.py has
the figures), where torch.sum's cascade summation does not.

Limits: one reduction kernel in eager on a GPU (two passes for large N); on the CPU,
eager materialises the widened gradients and their squares. torch.compile generates its
own reduction from either.
"""
import torch


def rung(t, s, k):
    g = t["grads"]
    if g.is_cuda:
        norm = torch.linalg.vector_norm(g, dtype=torch.float32)
    else:
        norm = g.float().square().sum().sqrt()
    return {"out": norm.reshape(1)}
