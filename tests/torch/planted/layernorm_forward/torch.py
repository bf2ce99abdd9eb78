"""Test only: a layernorm that leaves out the statistics the backward needs.

Idea: F.layer_norm alone, which returns the normalised rows and nothing else.

Why: the contract's outputs are out, mean and rstd; a rung that returns only out must
be INCORRECT, naming what it did not return, never pass on the one output it wrote.

Limits: none; it is wrong on purpose.
"""
import torch.nn.functional as F


def rung(t, s, k):
    return {"out": F.layer_norm(t["inp"], (s["C"],), t["weight"], t["bias"], 1e-5)}
