#!/usr/bin/env python3
"""The PyTorch side of tools/bench_cpu_trainer.sh: GPT-2 training steps in float32 eager
mode on the CPU, from an llm.c model file, on an llm.c token file; with --autocast, the
forward pass and the loss under torch.autocast(device, dtype=torch.bfloat16) (the matmuls
in bf16 through oneDNN or cuBLAS, the parameters, gradients and AdamW in fp32).

    bash tools/python/python.sh tools/bench_cpu_trainer.py --model model.bin --train tokens.bin
        [--B 4] [--T 64] [--steps 6] [--threads N] [--autocast] [--json FILE]
        [--device cuda] [--tf32] [--compile [--compile-backend B]]

On the GPU (tools/device/anchors.sh, the campaign's PyTorch anchor): --device cuda times
each step between torch.cuda.synchronize() calls and computes attention with
F.scaled_dot_product_attention(is_causal=True) (where this torch has it; --no-sdpa keeps
the explicit softmax); --tf32 allows tf32 matmuls; --compile runs the forward pass and the
loss through torch.compile (its first steps include the compilation: the JSON's
ms_per_step averages the steps after --warmup, default 1).

Each step is what wb's trainer does with its defaults: forward, cross-entropy over the
first V logits, backward, the global gradient norm clipped to 1, AdamW (lr 3e-4, betas
0.9/0.999, eps 1e-8, no weight decay). The model is written as nanoGPT writes it:
F.linear (bias fused into the GEMM), a causal softmax attention, tanh GELU, the
classifier tied to wte. Batches are read in order from the token file, B*T+1 tokens each.
Prints one line per step and writes {"ms": [...], "losses": [...]} to --json.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference", "pytorch"))
from gpt2 import NAMES, shapes  # noqa: E402  (the llm.c model file's layout)


LAYERED = set(NAMES) - {"wte", "wpe", "lnfw", "lnfb"}  # the tensors stacked over the layers


def read_model(path, device="cpu"):
    header = np.fromfile(path, dtype=np.int32, count=256)
    if header[0] != 20240326 or header[1] != 3:
        sys.exit(f"{path}: not an llm.c float32 model file (version 3)")
    maxT, V, L, NH, C, Vp = (int(x) for x in header[2:8])
    data = np.fromfile(path, dtype=np.float32, offset=256 * 4)
    params, at = {}, 0
    for name, shape in shapes(V, Vp, maxT, L, C).items():
        n = int(np.prod(shape))
        if at + n > data.size:
            sys.exit(f"{path}: truncated at parameter {name}")
        t = torch.from_numpy(data[at:at + n].copy()).view(shape).to(device)
        at += n
        # One leaf tensor per layer, as an nn.Module GPT-2 holds them: indexing a stacked
        # leaf would make every layer's backward add into a zeroed gradient of the whole stack.
        params[name] = [x.clone().requires_grad_() for x in t] if name in LAYERED else t.requires_grad_()
    return params, V, L, NH


def read_tokens(path):
    header = np.fromfile(path, dtype=np.int32, count=256)
    if header[0] != 20240520:
        sys.exit(f"{path}: not an llm.c token file")
    tokens = np.fromfile(path, dtype=np.uint16, offset=256 * 4)
    return torch.from_numpy(tokens.astype(np.int64))


def forward(p, idx, L, NH, sdpa=False):
    B, T = idx.shape
    C = p["wte"].shape[1]
    hs = C // NH
    causal = None if sdpa else torch.ones(T, T, dtype=torch.bool, device=idx.device).tril()
    x = p["wte"][idx] + p["wpe"][:T]
    for l in range(L):
        h = F.layer_norm(x, (C,), p["ln1w"][l], p["ln1b"][l])
        q, k, v = F.linear(h, p["qkvw"][l], p["qkvb"][l]).split(C, dim=2)
        q, k, v = (t.view(B, T, NH, hs).transpose(1, 2) for t in (q, k, v))
        if sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = torch.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
            y = att @ v
        y = y.transpose(1, 2).reshape(B, T, C)
        x = x + F.linear(y, p["attprojw"][l], p["attprojb"][l])
        h = F.layer_norm(x, (C,), p["ln2w"][l], p["ln2b"][l])
        h = F.gelu(F.linear(h, p["fcw"][l], p["fcb"][l]), approximate="tanh")
        x = x + F.linear(h, p["fcprojw"][l], p["fcprojb"][l])
    x = F.layer_norm(x, (C,), p["lnfw"], p["lnfb"])
    return F.linear(x, p["wte"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--B", type=int, default=4)
    ap.add_argument("--T", type=int, default=64)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: OMP_NUM_THREADS, else all)")
    ap.add_argument("--autocast", action="store_true", help="forward and loss under bf16 autocast")
    ap.add_argument("--json")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--tf32", action="store_true", help="cuda: allow tf32 matmuls")
    ap.add_argument("--compile", action="store_true", help="torch.compile the forward pass and the loss")
    ap.add_argument("--compile-backend", default="inductor", help="torch.compile's backend (the rehearsal: eager)")
    ap.add_argument("--no-sdpa", action="store_true", help="cuda: the explicit softmax, not F.scaled_dot_product_attention")
    ap.add_argument("--warmup", type=int, default=1, help="steps left out of ms_per_step")
    a = ap.parse_args()
    threads = a.threads or int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count()
    torch.set_num_threads(threads)
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    if a.tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    sdpa = cuda and not a.no_sdpa and hasattr(F, "scaled_dot_product_attention")
    if a.compile and not hasattr(torch, "compile"):
        sys.exit(f"--compile: torch {torch.__version__} has no torch.compile")
    p, V, L, NH = read_model(a.model, a.device)
    tokens = read_tokens(a.train)

    def step_loss(idx, targets):
        with torch.autocast(a.device, dtype=torch.bfloat16, enabled=a.autocast):
            logits = forward(p, idx, L, NH, sdpa)
            return F.cross_entropy(logits[..., :V].reshape(-1, V), targets.reshape(-1))
    run_loss = torch.compile(step_loss, backend=a.compile_backend) if a.compile else step_loss
    params = [t for name in NAMES for t in (p[name] if name in LAYERED else [p[name]])]
    opt = torch.optim.AdamW(params, lr=3e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    span = a.B * a.T + 1
    if tokens.numel() < span:
        sys.exit(f"{a.train}: {tokens.numel()} tokens, fewer than one batch ({span})")
    ms, losses = [], []
    for step in range(a.steps):
        at = (step * a.B * a.T) % (tokens.numel() - span + 1)
        batch = tokens[at:at + span]
        idx, targets = (t.view(a.B, a.T).to(a.device) for t in (batch[:-1], batch[1:]))
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = run_loss(idx, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss.item())
        print(f"pytorch step {step + 1}/{a.steps}: loss {losses[-1]:.6f} {ms[-1]:.1f} ms", flush=True)
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            timed = ms[a.warmup:] or ms
            json.dump({"ms": ms, "losses": losses, "threads": threads, "torch": torch.__version__,
                       "device": a.device, "gpu": torch.cuda.get_device_name() if cuda else None,
                       "B": a.B, "T": a.T, "L": L, "tf32": a.tf32, "autocast_bf16": a.autocast,
                       "compile": a.compile_backend if a.compile else None, "sdpa": sdpa,
                       "warmup": a.warmup, "ms_per_step": sum(timed) / len(timed),
                       "command": " ".join(sys.argv)}, f)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
