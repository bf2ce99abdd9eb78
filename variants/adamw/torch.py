"""PyTorch: one AdamW step (bias correction, decoupled weight decay) after gradient clipping.

Idea: g = grads * min(1, grad_clip / (grad_norm + 1e-6)); m and v are blended;
params -= lr * (m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps) + weight_decay * params).
The norm, the learning rate and the step t are (1) tensors, so every scalar that
changes per step stays on the device and broadcasts (no .item(), no host sync).

Why: the arithmetic of torch.optim.AdamW's capturable, single-tensor form (step, lr
on the device) and of clip_grad_norm_'s scaling, written out over the flat parameter
vector as a user of torch.compile writes a fused optimizer step: eager runs one
kernel per tensor op (as the unfused "foreach=False" optimizer does per parameter),
torch.compile fuses them into one pass over params, m, v and grads.

Limits: the clipping scale is 1 when the norm is NaN, as the contract's clip_scale
(torch.where, not clamp, which would propagate the NaN); grad_clip <= 0 turns clipping
off (a Python branch on a float scalar, fixed for a run). Eager launches about twenty
kernels. The bias corrections are computed in float32 from the float32 betas, as
torch's capturable AdamW does. Out of place: returns new params, m and v.
"""
import torch


def rung(t, s, k):
    # The contract's scalars are floats (AdamwArgs): the betas as float32 tensors, so
    # that 1 - beta1 is float32's 0.100000024, not float64's 0.1 rounded (2.4e-8 apart,
    # which m and v amplify where their two terms nearly cancel).
    b1, b2 = (torch.tensor(k[name], dtype=torch.float32, device=t["m"].device) for name in ("beta1", "beta2"))
    eps, wd, clip = k["eps"], k["weight_decay"], k["grad_clip"]
    g = t["grads"]
    if clip > 0:
        scale = clip / (t["grad_norm"] + 1e-6)
        g = g * torch.where(scale < 1.0, scale, torch.ones_like(scale))
    step = t["t"].float()
    m = b1 * t["m"] + (1.0 - b1) * g
    v = b2 * t["v"] + (1.0 - b2) * g * g
    correction1 = 1.0 - torch.pow(b1, step)
    correction2 = 1.0 - torch.pow(b2, step)
    p = t["params"]
    update = (m / correction1) / (torch.sqrt(v / correction2) + eps) + wd * p
    return {"params": p - t["lr"] * update, "m": m, "v": v}
