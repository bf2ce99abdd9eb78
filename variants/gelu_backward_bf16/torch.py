"""PyTorch: tanh-GELU backward on bf16: dinp = gelu'(inp) * dout, in fp32, rounded once.

Idea: the explicit derivative a custom autograd.Function's backward writes, on the
widened inputs: u = sqrt(2/pi) * (x + 0.044715 x^3), th = tanh(u),
gelu'(x) = 0.5 (1 + th) + 0.5 x (1 - th^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2);
times dout, then one cast to bf16 (dinp is overwritten, not accumulated).

Why: written on bf16 tensors directly, eager PyTorch would round each of the dozen
intermediates to bf16; widening first keeps them in fp32 and rounds the gradient once,
as the contract says.

Limits: eager launches about fifteen elementwise kernels with fp32 temporaries;
torch.compile fuses them into one.
"""
import math

import torch

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
CUBIC = 0.044715


def rung(t, s, k):
    x = t["inp"].float()
    th = torch.tanh(SQRT_2_OVER_PI * (x + CUBIC * x * x * x))
    dudx = SQRT_2_OVER_PI * (1.0 + 3.0 * CUBIC * x * x)
    grad = 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * dudx
    return {"dinp": (grad * t["dout"].float()).to(torch.bfloat16)}
