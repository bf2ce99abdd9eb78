"""PyTorch: token plus position embedding, out[b,t] = wte[inp[b,t]] + wpe[t].

Idea: F.embedding gathers the token rows; the position table (T, C) broadcasts over
the batch in the addition.

Why: this is GPT-2's input layer as a PyTorch user writes it (nanoGPT's
tok_emb + pos_emb); eager runs a gather kernel and an add, torch.compile fuses the
gather into the add so each output element is written once.

Limits: the token ids are int32 in the contract and F.embedding wants int64: .long()
costs one small extra kernel (and B*T*8 bytes) in eager. Eager materialises the
gathered (B, T, C) rows before the add.
"""
import torch.nn.functional as F


def rung(t, s, k):
    return {"out": F.embedding(t["inp"].long(), t["wte"]) + t["wpe"]}
