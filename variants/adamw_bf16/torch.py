"""PyTorch: AdamW step on fp32 master weights from bf16 gradients, bf16 params rounded stochastically.

Idea: elementwise fp32 tensor math over the N parameters: the clipping scale
min(1, grad_clip / (grad_norm + 1e-6)) from the norm tensor, g = grads * scale (widened),
m and v updated, bias-corrected with the step tensor t, master -= lr * (m_hat /
(sqrt(v_hat) + eps) + weight_decay * master); then the bf16 params written from the new
master: with stochastic == 1 by the contract's counter-based stochastic rounding (the
hash of element index and seed, reproduced with int64 tensor ops on the master's bit
pattern), with stochastic == 0 by a plain .to(torch.bfloat16) (nearest even).

Why: torch.optim.AdamW has no master-weight or stochastic-rounding mode, so mixed
precision training in PyTorch writes this step by hand (as llm.c does in CUDA); the
learning rate, norm, step and seed stay tensors (no .item()), like the capturable
optimizers, so the step neither syncs with the host nor recompiles per step. The hash
has to be bit-exact to give the contract's rounding, and torch has no uint32 multiply
that wraps, so each 32-bit product is split into two 16-bit halves in int64.

Limits: eager launches several dozen elementwise kernels (the update and about
twenty more for the hash and the bit manipulation), each a pass over N; torch.compile
fuses everything into one pass. The bias corrections are taken in fp32 (pow of the
betas), not double as the reference does: within the master's 1e-5 relative
tolerance. A master weight one fp32 ulp off the reference's can round to the other
bf16 neighbour, which the params' one-ulp tolerance allows.
"""
import torch

MASK32 = 0xFFFFFFFF


def mul32(x, c):
    # (x * c) mod 2^32 for x in [0, 2^32) held in int64: without a 64-bit overflow, as
    # x * lo16(c) + (x * hi16(c) mod 2^16) << 16.
    lo = x * (c & 0xFFFF)
    hi = ((x * (c >> 16)) & 0xFFFF) << 16
    return (lo + hi) & MASK32


def mix32(x):
    x = x ^ (x >> 16)
    x = mul32(x, 0x85EBCA6B)
    x = x ^ (x >> 13)
    x = mul32(x, 0xC2B2AE35)
    return x ^ (x >> 16)


def stochastic_round(master, seed):
    # The bf16 whose bits are the truncated fp32 bits, plus one ulp when the dropped
    # 16 bits exceed 16 random bits of the element's noise; NaN -> 0x7FFF.
    index = torch.arange(master.numel(), dtype=torch.int64, device=master.device)
    seed = seed.long() & MASK32
    noise = mix32((index & MASK32) ^ mix32((index >> 32) ^ mix32(seed ^ 0x9E3779B9)))
    bits = master.view(torch.int32).long() & MASK32
    rounded = (bits >> 16) + ((bits & 0xFFFF) > (noise & 0xFFFF)).long()
    rounded = torch.where((bits & 0x7FFFFFFF) > 0x7F800000, 0x7FFF, rounded)
    # uint16 bits -> int16 (two's complement) -> reinterpret as bf16
    rounded = torch.where(rounded >= 0x8000, rounded - 0x10000, rounded)
    return rounded.to(torch.int16).view(torch.bfloat16)


def rung(t, s, k):
    # The contract's scalars are floats (AdamwBf16Args): the betas as float32 tensors, so
    # that 1 - beta1 is float32's 0.100000024, not float64's 0.1 rounded (2.4e-8 apart,
    # which m and v amplify where their two terms nearly cancel).
    beta1, beta2 = (torch.tensor(k[name], dtype=torch.float32, device=t["m"].device) for name in ("beta1", "beta2"))
    eps, wd = k["eps"], k["weight_decay"]
    lr = t["lr"]
    step = t["t"].float()
    if k["grad_clip"] > 0:
        scale = k["grad_clip"] / (t["grad_norm"] + 1e-6)
        scale = torch.where(scale < 1.0, scale, 1.0)  # a NaN norm gives 1, as the contract's min
    else:
        scale = torch.ones_like(t["grad_norm"])
    g = t["grads"].float() * scale
    m = beta1 * t["m"] + (1.0 - beta1) * g
    v = beta2 * t["v"] + (1.0 - beta2) * g * g
    m_hat = m / (1.0 - torch.pow(beta1, step))
    v_hat = v / (1.0 - torch.pow(beta2, step))
    master = t["master"]
    master = master - lr * (m_hat / (torch.sqrt(v_hat) + eps) + wd * master)
    if k["stochastic"]:
        params = stochastic_round(master, t["seed"])
    else:
        params = master.to(torch.bfloat16)
    return {"params": params, "master": master, "m": m, "v": v}
