#!/usr/bin/env python3
"""GPT-2 in PyTorch in llm.c's mixed precision: the independent check of wb's bf16 trainer.

    bash tools/python/python.sh reference/pytorch/gpt2_bf16.py --out DIR [gpt2.py's options]

The model, batch and files of gpt2.py (same options, same seed: the same model.bin and
tokens.bin), trained in the scheme of `trainer --precision bf16 --rounding nearest`:
  - parameters, activations and their gradients are bf16 tensors: each op widens its
    bf16 inputs, computes in float32 and rounds each output to bf16 once (round to
    nearest even), and autograd rounds each op's input gradients the same way, since
    the widening cast's backward is a rounding cast;
  - where one bf16 tensor feeds two ops (the residual stream, wte), autograd adds the
    two gradients in bf16, as the trainer's ops add into a bf16 gradient buffer;
  - the MLP's first layer keeps the GELU's input rounded (fch, which gelu_backward
    reads) and writes the GELU of the unrounded sum, as matmul_gelu_forward does; its
    gradient flows through the rounded input, as gelu_backward's does;
  - the loss is float32 from the widened logits (the first V columns), and dlogits
    are rounded to bf16; layernorm statistics and attention stay float32 inside ops;
  - the gradient norm is taken in float64 over the widened bf16 gradients, clipping
    as torch.nn.utils.clip_grad_norm_; AdamW (torch.optim.AdamW's formula, in float64
    per element as wb's reference) updates float32 master weights and moments, and
    the bf16 parameters are the new master weights rounded to nearest even.
It writes into DIR model.bin and tokens.bin (as gpt2.py), and
  expected_bf16_state.bin  the first step's logits (widened), loss and gradients
                           (widened), in the trainer's --debug-state format
  expected_bf16.json       the losses of --steps AdamW steps on the one batch
  expected_bf16_params.bin the bf16 parameters after them (raw bf16 bits, llm.c's order)
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2 import NAMES, arguments, setup, write_expected, write_state  # noqa: E402
from ops import LAYERNORM_EPS, _attention  # noqa: E402

BF16 = torch.bfloat16


def op(fn, *inputs):
    """One op of the scheme: bf16 inputs widened, float32 math, the output rounded once."""
    return fn(*(x.float() for x in inputs)).to(BF16)


class _ValueOf(torch.autograd.Function):
    """The value of its first argument, the gradient of its second."""

    @staticmethod
    def forward(ctx, value, through):
        return value.clone()

    @staticmethod
    def backward(ctx, grad):
        return None, grad


def matmul_gelu(x, w, b):
    """(fch, fch_gelu): the rounded sum, and the GELU of the unrounded one, rounded. The
    GELU's gradient is that of the rounded input (the value the trainer keeps)."""
    exact = F.linear(x.float(), w.float(), b.float())
    fch = exact.to(BF16)
    through = F.gelu(fch.float(), approximate="tanh")
    value = F.gelu(exact.detach(), approximate="tanh")
    return fch, _ValueOf.apply(value, through).to(BF16)


def flash_attention(qkv, NH):
    """Attention as a FlashAttention-2 forward on tensor cores computes it (attention_forward_bf16
    cuda/4): scores in log2 units, P = exp2(s - max) rounded to bf16 as the A operand of P V, the
    row sum l of the unrounded P, out = (P V) / l. With every key of a row in one key tile
    (T <= the rung's key tile) the running max is the row's max, so this mirrors the kernel
    up to fp32 summation order. Its gradient is that of the unrounded attention: the backward
    recomputes P in fp32 from lse."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    hs = C // NH
    q, k, v = (part.view(B, T, NH, hs).transpose(1, 2) for part in qkv.split(C, dim=2))
    s = (q @ k.transpose(-2, -1)) * (math.log2(math.e) / math.sqrt(hs))
    s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    p = torch.exp2(s - s.amax(dim=-1, keepdim=True))
    out = (p.to(BF16).float() @ v) / p.sum(dim=-1, keepdim=True)
    return out.transpose(1, 2).reshape(B, T, C)


def layernorm(x, w, b):
    return op(lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, LAYERNORM_EPS), x, w, b)


def forward(p, idx, NH, round_p=False):
    B, T = idx.shape
    L = p["ln1w"].shape[0]
    x = op(lambda wte, wpe: wte[idx] + wpe[:T], p["wte"], p["wpe"])
    for l in range(L):
        h = layernorm(x, p["ln1w"][l], p["ln1b"][l])
        qkv = op(F.linear, h, p["qkvw"][l], p["qkvb"][l])
        if round_p:
            att = op(lambda qkv: _ValueOf.apply(flash_attention(qkv.detach(), NH), _attention(qkv, NH)[0]), qkv)
        else:
            att = op(lambda qkv: _attention(qkv, NH)[0], qkv)
        x = op(torch.add, x, op(F.linear, att, p["attprojw"][l], p["attprojb"][l]))
        h = layernorm(x, p["ln2w"][l], p["ln2b"][l])
        _, h = matmul_gelu(h, p["fcw"][l], p["fcb"][l])
        x = op(torch.add, x, op(F.linear, h, p["fcprojw"][l], p["fcprojb"][l]))
    x = layernorm(x, p["lnfw"], p["lnfb"])
    return op(lambda x, w: x @ w.T, x, p["wte"])  # (B, T, Vp); the padded columns are 0


def loss_of(logits, targets, V):
    return F.cross_entropy(logits.float()[..., :V].reshape(-1, V), targets.reshape(-1))


class AdamW:
    """float32 master weights and moments, float64 arithmetic per element, bf16
    parameters rounded to nearest even from the new master weights."""

    def __init__(self, master, lr, weight_decay, beta1=0.9, beta2=0.999, eps=1e-8):
        self.master = master
        self.m = [torch.zeros_like(x) for x in master]
        self.v = [torch.zeros_like(x) for x in master]
        self.lr, self.wd, self.b1, self.b2, self.eps, self.t = lr, weight_decay, beta1, beta2, eps, 0

    def step(self, params, scale):
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        with torch.no_grad():
            for p, w, m, v in zip(params, self.master, self.m, self.v):
                g = p.grad.double() * scale
                m1 = self.b1 * m.double() + (1 - self.b1) * g
                v1 = self.b2 * v.double() + (1 - self.b2) * g * g
                w64 = w.double()
                w.copy_((w64 - self.lr * ((m1 / c1) / ((v1 / c2).sqrt() + self.eps) + self.wd * w64)).float())
                m.copy_(m1.float())
                v.copy_(v1.float())
                p.copy_(w.to(BF16))


def clip_scale(params, clip):
    norm = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in params))
    # As the trainer: the norm in float32, the scale min(1, clip / (norm + 1e-6)).
    norm = float(torch.tensor(norm, dtype=torch.float32))
    return 1.0 if clip <= 0 else min(1.0, clip / (norm + 1e-6))


def main():
    a = arguments(__doc__, steps=5, extra=lambda ap: ap.add_argument(
        "--round-p", action="store_true",
        help="attention rounds P to bf16 before P V, as a FlashAttention-style tensor-core forward does"))
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    Vp, p, idx, targets = setup(a)

    master = [p[name].float() for name in NAMES]  # the float32 values of model.bin
    params = [w.to(BF16).requires_grad_() for w in master]
    named = dict(zip(NAMES, params))
    opt = AdamW([w.clone() for w in master], a.lr, a.weight_decay)
    losses = []
    for step in range(a.steps):
        for t in params:
            t.grad = None
        logits = forward(named, idx, a.NH, a.round_p)
        loss = loss_of(logits, targets, a.V)
        loss.backward()
        if step == 0:
            write_state(os.path.join(a.out, "expected_bf16_state.bin"), a.B, a.T, a.V, Vp, logits.float(), loss,
                        [t.grad.float() for t in params])
        opt.step(params, clip_scale(params, a.grad_clip))
        losses.append(loss.item())
    with open(os.path.join(a.out, "expected_bf16_params.bin"), "wb") as f:
        for t in params:
            f.write(t.detach().view(torch.int16).numpy().tobytes())
    write_expected(os.path.join(a.out, "expected_bf16.json"), a, Vp, losses)
    if losses:  # --steps 0 writes the model and tokens only
        print(f"wrote {a.out}: {a.steps} bf16 losses from {losses[0]:.6f} to {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
