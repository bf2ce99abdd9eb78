"""PyTorch: global L2 norm of the gradients, out[0] = sqrt(sum grads^2).

Idea: on a GPU, torch.linalg.vector_norm over the flat gradient vector; on the CPU,
the sum of the squares (torch.sum), then its square root; reshaped to the contract's (1).

Why: vector_norm is what torch.nn.utils.clip_grad_norm_ computes (per tensor, then the
norm of the norms; here the gradients are one flat tensor), one reduction kernel on a
GPU. On the CPU its float32 reduction is not accurate enough for the contract: relative
errors of 8.7e-6, 7.3e-5 and 1.8e-4 at N = 0.92M, 4.2M and 7.9M (uniform values in
[-1, 1), torch 2.11, against a float64 sum; the tolerance is 1e-4), growing with N, where
torch.sum's cascade summation stays under 1e-7. torch.compile generates its own reduction
from either.

Limits: on the CPU, eager materialises the squares (one more pass over N floats).
"""
import torch


def rung(t, s, k):
    g = t["grads"]
    norm = torch.linalg.vector_norm(g) if g.is_cuda else g.square().sum().sqrt()
    return {"out": norm.reshape(1)}
