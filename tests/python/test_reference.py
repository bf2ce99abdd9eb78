#!/usr/bin/env python3
"""Checks wb's CPU reference of one op against PyTorch.

`wb dump` writes the op's random inputs and what the reference made of them; PyTorch
(reference/pytorch/ops.py, float64, autograd for backward ops) computes the same from
the same inputs; every output must agree elementwise within
    |wb - torch| <= atol * max|torch| + rtol * |torch|
(the absolute part scales with the tensor, since the reference stores float32).
Exit 0 when all agree, 1 otherwise, 77 (skipped) without the pinned torch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import needs

needs.modules("torch")
import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "reference", "pytorch"))
import ops  # noqa: E402

# Small shapes: nothing a power of two, and the GPT-2 vocabulary for the classifier ops.
SHAPES = ["B=3,T=37,C=75,NH=3,V=101,Vp=128,OC=221,L=1"]
VOCAB_OPS = {"softmax_forward", "crossentropy_forward", "crossentropy_softmax_backward", "fused_classifier"}
VOCAB_SHAPE = "B=2,T=3,C=64,V=50257"
ATOL, RTOL = 1e-6, 1e-5


def load(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    inputs, expected = {}, {}
    for t in manifest["tensors"]:
        dtype = np.float32 if t["dtype"] == "f32" else np.int32
        def read(name):
            a = np.fromfile(os.path.join(folder, name), dtype=dtype).reshape(t["dims"])
            return torch.from_numpy(a.astype(np.float64 if dtype == np.float32 else np.int64))
        if "initial" in t:
            inputs[t["name"]] = read(t["initial"])
        if "expected" in t:
            expected[t["name"]] = read(t["expected"])
    return manifest, inputs, expected


def compare(name, ours, theirs):
    ours, theirs = ours.numpy(), theirs.detach().numpy()
    if ours.shape != theirs.shape:
        return False, f"{name}: shape {ours.shape} vs {theirs.shape}"
    scale = max(float(np.abs(theirs).max()), 1e-30)
    bound = ATOL * scale + RTOL * np.abs(theirs)
    err = np.abs(ours - theirs)
    bad = ~(err <= bound)  # NaN fails
    worst = float(np.nanmax(err / np.maximum(bound, 1e-300)))
    text = f"{name}: max abs err {np.nanmax(err):.2e} (scale {scale:.2e}), worst err/bound {worst:.3f}"
    if bad.any():
        i = np.flatnonzero(bad)[0]
        return False, f"{text}; {int(bad.sum())} of {bad.size} outside, first at {i}: {ours.flat[i]} vs {theirs.flat[i]}"
    return True, text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wb", required=True, help="the wb binary")
    parser.add_argument("--op", required=True)
    parser.add_argument("--seed", type=int, default=20261121)
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)

    shapes = SHAPES + ([VOCAB_SHAPE] if args.op in VOCAB_OPS else [])
    ok = True
    for shape in shapes:
        with tempfile.TemporaryDirectory() as folder:
            subprocess.run([args.wb, "dump", args.op, "--shape", shape, "--seed", str(args.seed), "--out", folder],
                           check=True, stdout=subprocess.DEVNULL)
            manifest, inputs, expected = load(folder)
            theirs = getattr(ops, args.op)(inputs, manifest["shape"], manifest["scalars"])
            if set(theirs) != set(expected):
                print(f"{args.op} at {shape}: PyTorch gives {sorted(theirs)}, wb checks {sorted(expected)}")
                ok = False
                continue
            for name in expected:
                good, text = compare(name, expected[name], theirs[name])
                print(f"{'ok  ' if good else 'FAIL'} {args.op} at {shape}: {text}")
                ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
