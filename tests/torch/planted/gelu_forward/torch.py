"""Test only: PyTorch's GELU with the exact erf form instead of the contract's tanh form.

Idea: F.gelu(x) without approximate="tanh", the default a user may reach for.

Why: the two forms differ by up to about 5e-4 around |x| = 2, far beyond the fp32
tolerance: wb check must call this INCORRECT while variants/gelu_forward/torch.py passes
beside it (tests/workbench/test_torch_rungs.cpp).

Limits: none; it is wrong on purpose.
"""
import torch.nn.functional as F


def rung(t, s, k):
    return {"out": F.gelu(t["inp"])}
