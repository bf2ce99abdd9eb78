"""PyTorch: softmax over the first V of each row of Vp logits, the padding written as 0.

Idea: torch.softmax over logits[..., :V] (a strided view, no copy), then F.pad
appends Vp - V zero columns.

Why: the classifier's softmax as a user writes it over a padded vocabulary; eager
runs PyTorch's softmax kernel (max-subtracted, numerically safe) and a pad copy,
torch.compile fuses the pad into the softmax's write.

Limits: eager launches two kernels and writes the (B, T, V) probabilities twice
(once, then copied into the padded tensor).
"""
import torch
import torch.nn.functional as F


def rung(t, s, k):
    V, Vp = s["V"], s["Vp"]
    probs = torch.softmax(t["logits"][..., :V], dim=-1)
    return {"probs": F.pad(probs, (0, Vp - V))}
