"""PyTorch: global L2 norm of the gradients, out[0] = sqrt(sum grads^2).

Idea: torch.linalg.vector_norm over the flat gradient vector, reshaped to the
contract's (1).

Why: what torch.nn.utils.clip_grad_norm_ computes (per tensor, then the norm of the
norms; here the gradients are one flat tensor); eager runs PyTorch's norm
reduction, torch.compile its own reduction kernel(s).

Limits: the sum of squares is accumulated in float32 by PyTorch's reduction tree
(not compensated); for GPT-2 sized N that stays far inside the 1e-4 tolerance.
"""
import torch


def rung(t, s, k):
    return {"out": torch.linalg.vector_norm(t["grads"]).reshape(1)}
