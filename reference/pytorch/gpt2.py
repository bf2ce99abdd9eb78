#!/usr/bin/env python3
"""GPT-2 in PyTorch (float64), the independent check of wb's trainer.

    bash tools/python/python.sh reference/pytorch/gpt2.py --out DIR [--V 50257] [--L 2] [--C 64] [--NH 4]
        [--maxT 32] [--B 2] [--T 16] [--steps 10] [--lr 1e-3] [--weight-decay 0.1] [--grad-clip 1.0]

builds a small GPT-2 (learned positions, pre-layernorm blocks, tanh GELU, classifier
tied to wte, vocabulary padded from V to Vp = V rounded up to 128) with random
parameters from --seed, and writes into DIR:
  model.bin           the parameters as an llm.c model file (version 3, float32)
  tokens.bin          one batch, B*T+1 random tokens, as an llm.c token file
  expected_state.bin  logits (B, T, Vp), mean loss and every parameter gradient of the
                      first step, in the trainer's --debug-state format
  expected.json       the losses of --steps AdamW steps on that batch (the same batch
                      every step, as the trainer reads a file holding one batch), with
                      gradient clipping as torch.nn.utils.clip_grad_norm_
Everything is computed in float64 from the float32 values written to model.bin.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops import _attention  # noqa: E402

NAMES = ["wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb", "ln2w", "ln2b", "fcw", "fcb",
         "fcprojw", "fcprojb", "lnfw", "lnfb"]


def shapes(V, Vp, maxT, L, C):
    return {"wte": (Vp, C), "wpe": (maxT, C), "ln1w": (L, C), "ln1b": (L, C), "qkvw": (L, 3 * C, C),
            "qkvb": (L, 3 * C), "attprojw": (L, C, C), "attprojb": (L, C), "ln2w": (L, C), "ln2b": (L, C),
            "fcw": (L, 4 * C, C), "fcb": (L, 4 * C), "fcprojw": (L, C, 4 * C), "fcprojb": (L, C), "lnfw": (C,),
            "lnfb": (C,)}


def make_params(V, Vp, maxT, L, C, gen):
    """Random parameters, every one non-trivial (biases and layernorms too), the padded
    rows of wte zero; rounded to float32."""
    p = {}
    for name, shape in shapes(V, Vp, maxT, L, C).items():
        if name in ("ln1w", "ln2w", "lnfw"):
            t = 1.0 + 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif name in ("attprojw", "fcprojw"):
            t = 0.02 / math.sqrt(2 * L) * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif name.endswith("b"):
            t = 0.05 * torch.randn(shape, generator=gen, dtype=torch.float64)
        else:
            t = 0.02 * torch.randn(shape, generator=gen, dtype=torch.float64)
        if name == "wte":
            t[V:] = 0
        p[name] = t.float().double()
    return p


def forward(p, idx, NH, eps=1e-5):
    B, T = idx.shape
    C = p["wte"].shape[1]
    L = p["ln1w"].shape[0]
    x = p["wte"][idx] + p["wpe"][:T]
    for l in range(L):
        h = F.layer_norm(x, (C,), p["ln1w"][l], p["ln1b"][l], eps)
        qkv = h @ p["qkvw"][l].T + p["qkvb"][l]
        att, _ = _attention(qkv, NH)
        x = x + att @ p["attprojw"][l].T + p["attprojb"][l]
        h = F.layer_norm(x, (C,), p["ln2w"][l], p["ln2b"][l], eps)
        h = F.gelu(h @ p["fcw"][l].T + p["fcb"][l], approximate="tanh")
        x = x + h @ p["fcprojw"][l].T + p["fcprojb"][l]
    x = F.layer_norm(x, (C,), p["lnfw"], p["lnfb"], eps)
    return x @ p["wte"].T  # (B, T, Vp); the padded columns are 0


def loss_of(logits, targets, V):
    return F.cross_entropy(logits[..., :V].reshape(-1, V), targets.reshape(-1))


def write_model(path, p, V, Vp, maxT, L, NH, C):
    header = np.zeros(256, dtype=np.int32)
    header[:8] = [20240326, 3, maxT, V, L, NH, C, Vp]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        for name in NAMES:
            f.write(p[name].detach().numpy().astype(np.float32).tobytes())


def write_tokens(path, tokens):
    header = np.zeros(256, dtype=np.int32)
    header[:3] = [20240520, 1, len(tokens)]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(np.asarray(tokens, dtype=np.uint16).tobytes())


def write_state(path, B, T, V, Vp, logits, loss, grads):
    header = np.zeros(256, dtype=np.int32)
    n = sum(g.numel() for g in grads)
    header[:7] = [20261121, 1, B, T, V, Vp, n]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(logits.detach().numpy().astype(np.float32).tobytes())
        f.write(struct.pack("<f", float(loss.detach())))
        for g in grads:
            f.write(g.detach().numpy().astype(np.float32).tobytes())


def arguments(description, steps, extra=None):
    """The options of gpt2.py (and gpt2_bf16.py, which trains the same model): its model,
    batch, AdamW settings and seed; `extra(parser)` adds a caller's own."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--V", type=int, default=50257)
    ap.add_argument("--L", type=int, default=2)
    ap.add_argument("--C", type=int, default=64)
    ap.add_argument("--NH", type=int, default=4)
    ap.add_argument("--maxT", type=int, default=32)
    ap.add_argument("--B", type=int, default=2)
    ap.add_argument("--T", type=int, default=16)
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    if extra:
        extra(ap)
    return ap.parse_args()


def setup(a):
    """The model and the batch of the options: writes model.bin and tokens.bin into
    a.out, returns (Vp, the float64 parameters by name, idx, targets)."""
    Vp = (a.V + 127) // 128 * 128
    os.makedirs(a.out, exist_ok=True)
    gen = torch.Generator().manual_seed(a.seed)
    p = make_params(a.V, Vp, a.maxT, a.L, a.C, gen)
    tokens = torch.randint(0, a.V, (a.B * a.T + 1,), generator=gen)
    write_model(os.path.join(a.out, "model.bin"), p, a.V, Vp, a.maxT, a.L, a.NH, a.C)
    write_tokens(os.path.join(a.out, "tokens.bin"), tokens.tolist())
    return Vp, p, tokens[:-1].view(a.B, a.T), tokens[1:].view(a.B, a.T)


def write_expected(path, a, Vp, losses):
    """The run's configuration, losses and parameter shapes, as JSON."""
    config = {"V": a.V, "Vp": Vp, "L": a.L, "C": a.C, "NH": a.NH, "maxT": a.maxT, "B": a.B, "T": a.T,
              "steps": a.steps, "lr": a.lr, "weight_decay": a.weight_decay, "grad_clip": a.grad_clip}
    with open(path, "w") as f:
        json.dump({"config": config, "losses": losses, "shapes": {n: list(s) for n, s in
                                                                  shapes(a.V, Vp, a.maxT, a.L, a.C).items()}}, f)


def main():
    a = arguments(__doc__, steps=10)
    Vp, p, idx, targets = setup(a)

    params = [p[name].clone().requires_grad_() for name in NAMES]
    named = dict(zip(NAMES, params))
    logits = forward(named, idx, a.NH)
    loss = loss_of(logits, targets, a.V)
    loss.backward()
    write_state(os.path.join(a.out, "expected_state.bin"), a.B, a.T, a.V, Vp, logits, loss,
                [t.grad for t in params])

    opt = torch.optim.AdamW(params, lr=a.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=a.weight_decay)
    losses = []
    for _ in range(a.steps):
        opt.zero_grad()
        loss = loss_of(forward(named, idx, a.NH), targets, a.V)
        loss.backward()
        if a.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(params, a.grad_clip)
        opt.step()
        losses.append(loss.item())
    write_expected(os.path.join(a.out, "expected.json"), a, Vp, losses)
    print(f"wrote {a.out}: {a.steps} losses from {losses[0]:.6f} to {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
