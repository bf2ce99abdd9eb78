#!/usr/bin/env python3
"""The Triton rungs of layernorm_forward, layernorm_backward and crossentropy_forward are
correct under Triton's interpreter, and the check can tell when one is not: through
tools/triton/interpret.py's protocol (docs/triton.md), as wb's emu backend will call it.

- Each rung at wb's check shapes for its op (contract/shape.cpp: tiny, odd, ragged,
  ragged8 and wide or vocab, the ragged ones included) at its default parameters, and at
  several of them across other parameters, so that both of a layernorm rung's paths (the
  row in one tile, and the row in several) run. Fresh random inputs (the seed printed:
  --seed reproduces) drawn as wb draws them (contract/ops/*.cpp); outputs poisoned with
  NaN, and the accumulated gradients of layernorm_backward (+=) given random initial
  values that the reference adds to. Checked against float64 numpy with the ops'
  tolerances: |out - ref| <= atol + rtol |ref| per element, NaN never passes.
- The planted control tests/triton/planted/layernorm_backward/06_triton_mean_over_tile.py
  (the row means of g and g n divided by the tile's width BLOCK_C, not by C) is
  INCORRECT at shapes where C < BLOCK_C, so that the check above cannot pass a rung
  whose reduction counts its masked lanes.

Skipped (77) without the project's venv (torch and triton). Exit 0 when every case
holds, 1 otherwise, each failure named.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import needs  # noqa: E402

needs.modules("torch", "triton", "numpy")
import numpy as np  # noqa: E402

ROOT = needs.ROOT
INTERPRET = os.path.join(ROOT, "tools", "triton", "interpret.py")
LN_FORWARD = os.path.join(ROOT, "variants", "layernorm_forward", "08_triton_row_tiles.py")
LN_BACKWARD = os.path.join(ROOT, "variants", "layernorm_backward", "05_triton_column_tiles.py")
CROSSENTROPY = os.path.join(ROOT, "variants", "crossentropy_forward", "02_triton_row_tiles.py")
PLANTED = os.path.join(ROOT, "tests", "triton", "planted", "layernorm_backward", "06_triton_mean_over_tile.py")

EPS = 1e-5  # kLayernormEps

# wb's check shapes (contract/shape.cpp: the emulated list, and gpt2 from the device's),
# the dimensions the ops read.
ROWS = {"tiny": (2, 3, 8), "odd": (3, 37, 75), "gpt2": (2, 64, 768), "wide": (2, 19, 1024), "long": (1, 130, 256),
        "vocab": (1, 5, 96), "ragged": (3, 43, 168), "ragged8": (1, 17, 136)}
VOCAB = {"tiny": (2, 3, 11, 16), "odd": (3, 37, 101, 128), "wide": (2, 19, 300, 384),
         "vocab": (1, 5, 50257, 50304), "ragged": (3, 43, 101, 104), "ragged8": (1, 17, 300, 328)}


def summed(length):
    """ops::summed for the fp32 class (contract/ops/common.h): a sum of `length` terms."""
    return (2e-5 * math.sqrt(max(1.0, length)), 1e-5)


# The ops' tolerances (contract/ops/layernorm.cpp, classifier.cpp): (atol, rtol).
def ln_forward_tol(B, T, C):
    return {"out": (2e-5, 1e-5), "mean": (1e-6, 1e-5), "rstd": (1e-5, 1e-5)}


def ln_backward_tol(B, T, C):
    return {"dinp": summed(C), "dweight": summed(B * T), "dbias": summed(B * T)}


CROSSENTROPY_TOL = {"losses": (1e-5, 1e-5)}


def forward_reference(x, weight, bias):
    """layernorm_forward in float64 (reference/layernorm.cpp): biased variance."""
    x = x.astype(np.float64)
    m = x.mean(axis=1)
    s = 1.0 / np.sqrt(((x - m[:, None]) ** 2).mean(axis=1) + EPS)
    out = (x - m[:, None]) * s[:, None] * weight.astype(np.float64) + bias.astype(np.float64)
    return out, m, s


def backward_reference(dinp, dweight, dbias, dout, x, weight, mean, rstd):
    """layernorm_backward in float64 from the stored fp32 statistics, added to the
    gradients' initial values."""
    x, dout, w = x.astype(np.float64), dout.astype(np.float64), weight.astype(np.float64)
    m, s = mean.astype(np.float64)[:, None], rstd.astype(np.float64)[:, None]
    n = (x - m) * s
    g = w * dout
    d = (g - g.mean(axis=1, keepdims=True) - n * (g * n).mean(axis=1, keepdims=True)) * s
    return (dinp.astype(np.float64) + d, dweight.astype(np.float64) + (n * dout).sum(axis=0),
            dbias.astype(np.float64) + dout.sum(axis=0))


class Case:
    """One request: its inputs written, its outputs poisoned or initialised, their
    references kept."""

    def __init__(self, folder, label, fields, params, tensors, references, tol):
        self.label, self.references, self.tol = label, references, tol
        self.dir = os.path.join(folder, "".join(ch if ch.isalnum() else "_" for ch in label))
        os.makedirs(self.dir)
        request = {"schema": "wb.triton_interpret/1", "fields": fields, "params": params, "tensors": {}}
        for name, array in tensors.items():
            array.tofile(os.path.join(self.dir, name + ".bin"))
            request["tensors"][name] = {"in": name + ".bin", "count": int(array.size)}
            if name in references:
                request["tensors"][name]["out"] = name + ".out.bin"
        self.request = os.path.join(self.dir, "request.json")
        with open(self.request, "w") as f:
            json.dump(request, f)

    def verdict(self):
        """None when every output is correct, else why not."""
        whys = []
        for name, reference in self.references.items():
            path = os.path.join(self.dir, name + ".out.bin")
            if not os.path.exists(path):
                whys.append(f"{name}: no output written")
                continue
            out = np.fromfile(path, dtype=np.float32).astype(np.float64).reshape(reference.shape)
            atol, rtol = self.tol[name]
            bad = ~(np.abs(out - reference) <= atol + rtol * np.abs(reference))  # NaN is bad
            if bad.any():
                i = np.unravel_index(np.argmax(bad), bad.shape)
                whys.append(f"{name}: {int(bad.sum())} of {bad.size} values outside the tolerance, the first at "
                            f"{tuple(map(int, i))}: {out[i]!r}, the reference {reference[i]!r}")
        return "; ".join(whys) or None


def params_text(params):
    return ",".join(f"{k}={v}" for k, v in params.items()) or "defaults"


def ln_forward_case(folder, rng, shape, params):
    B, T, C = ROWS[shape]
    # contract/ops/layernorm.cpp: every input uniform in [-1, 1] (Init's default).
    x = rng.uniform(-1, 1, (B * T, C)).astype(np.float32)
    weight = rng.uniform(-1, 1, C).astype(np.float32)
    bias = rng.uniform(-1, 1, C).astype(np.float32)
    out, m, s = forward_reference(x, weight, bias)
    nan = lambda *s: np.full(s, np.nan, np.float32)  # noqa: E731
    return Case(folder, f"layernorm_forward {shape} {params_text(params)}", {"B": B, "T": T, "C": C}, params,
                {"out": nan(B * T, C), "mean": nan(B * T), "rstd": nan(B * T), "inp": x, "weight": weight,
                 "bias": bias}, {"out": out, "mean": m, "rstd": s}, ln_forward_tol(B, T, C))


def ln_backward_case(folder, rng, shape, params, tag=""):
    B, T, C = ROWS[shape]
    u = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    dinp, dweight, dbias = u(B * T, C), u(C), u(C)  # inouts: Init::uniform(-1, 1), then +=
    dout, x, weight = u(B * T, C), u(B * T, C), u(C)
    # The saved statistics, as the op's prepare makes them: layernorm_forward's of inp,
    # stored in fp32.
    _, m, s = forward_reference(x, np.ones(C, np.float32), np.zeros(C, np.float32))
    mean, rstd = m.astype(np.float32), s.astype(np.float32)
    ref = backward_reference(dinp, dweight, dbias, dout, x, weight, mean, rstd)
    return Case(folder, f"layernorm_backward{tag} {shape} {params_text(params)}", {"B": B, "T": T, "C": C},
                params, {"dinp": dinp, "dweight": dweight, "dbias": dbias, "dout": dout, "inp": x,
                         "weight": weight, "mean": mean, "rstd": rstd},
                dict(zip(("dinp", "dweight", "dbias"), ref)), ln_backward_tol(B, T, C))


def crossentropy_case(folder, rng, shape, params):
    B, T, V, Vp = VOCAB[shape]
    # make_probabilities (contract/ops/classifier.cpp): uniform logits in [-4, 4], every
    # fourth row stretched ninefold (probabilities down to about e^-72), softmaxed over
    # the first V, the padding 0.
    logits = rng.uniform(-4, 4, (B * T, Vp)).astype(np.float64)
    logits[1::4] *= 9.0
    e = np.exp(logits[:, :V] - logits[:, :V].max(axis=1, keepdims=True))
    probs = np.zeros((B * T, Vp), np.float32)
    probs[:, :V] = e / e.sum(axis=1, keepdims=True)
    targets = rng.integers(0, V, B * T).astype(np.int32)  # token_input: in [0, V)
    targets[0] = V - 1  # the last real column, where an off-by-one in the row stride shows
    losses = -np.log(probs[np.arange(B * T), targets].astype(np.float64))
    return Case(folder, f"crossentropy_forward {shape} {params_text(params)}", {"B": B, "T": T, "Vp": Vp}, params,
                {"losses": np.full(B * T, np.nan, np.float32), "probs": probs, "targets": targets},
                {"losses": losses}, CROSSENTROPY_TOL)


def interpret(rung, cases):
    return subprocess.run([sys.executable, INTERPRET, rung] + [c.request for c in cases],
                          capture_output=True, text=True, timeout=600)


def run_rung(rung, cases, failures):
    r = interpret(rung, cases)
    if r.returncode != 0:
        failures.append(f"{os.path.basename(rung)}: interpret.py exited {r.returncode}: "
                        f"{(r.stdout + r.stderr).strip()[-2000:]}")
        return
    for c in cases:
        why = c.verdict()
        print(f"{'ok' if why is None else 'INCORRECT'}: {c.label}{'' if why is None else ': ' + why}")
        if why:
            failures.append(f"{c.label}: {why}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, help="the inputs' seed (default: fresh, printed)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed} (rerun with --seed {seed})")
    rng = np.random.default_rng(seed)
    failures = []

    with tempfile.TemporaryDirectory(prefix="wb-triton-interpret-ln-") as folder:
        # layernorm_forward: the defaults (block_c 1024: every row in one tile but wide's
        # C = 1024, exactly one), then block_c 128, where odd (75) is one tile and
        # ragged (168), ragged8 (136), long (256) and wide (1024) take several, the last
        # one partial at 168 and 136.
        cases = [ln_forward_case(folder, rng, s, {}) for s in ("tiny", "odd", "ragged", "ragged8", "wide")]
        cases += [ln_forward_case(folder, rng, s, {"block_c": 128, "num_warps": 8})
                  for s in ("odd", "ragged", "ragged8", "long")]
        cases += [ln_forward_case(folder, rng, "wide", {"block_c": 512})]
        run_rung(LN_FORWARD, cases, failures)

        # layernorm_backward: the defaults (block_c 1024: the row kernel's one-tile path;
        # block_col 32: several column tiles, a partial last one at odd's 75), then
        # block_c 512 (odd 75 and ragged 168 one tile, gpt2 768 two, the second partial,
        # wide 1024 two) with block_col 64. B*T runs from 6 to 130 rows, a multiple of the
        # column kernel's 32-row slab only at gpt2 (128): elsewhere its last slab is partial.
        cases = [ln_backward_case(folder, rng, s, {}) for s in ("tiny", "odd", "ragged", "ragged8", "wide")]
        cases += [ln_backward_case(folder, rng, s, {"block_c": 512, "block_col": 64, "num_warps": 8})
                  for s in ("odd", "ragged", "gpt2", "wide")]
        run_rung(LN_BACKWARD, cases, failures)

        # crossentropy_forward: every check shape at the defaults (block 256: one
        # program), then block 128, where ragged's 129 rows take two programs, the last
        # one holding a single row, and block 1024.
        cases = [crossentropy_case(folder, rng, s, {}) for s in VOCAB]
        cases += [crossentropy_case(folder, rng, s, {"block": 128, "num_warps": 8}) for s in ("odd", "ragged")]
        cases += [crossentropy_case(folder, rng, "ragged8", {"block": 1024})]
        run_rung(CROSSENTROPY, cases, failures)

        # The planted control: INCORRECT wherever C < BLOCK_C, here at the default 1024.
        planted = [ln_backward_case(folder, rng, s, {}, " mean-over-tile") for s in ("tiny", "ragged", "ragged8")]
        r = interpret(PLANTED, planted)
        if r.returncode not in (0, 1):
            failures.append(f"{os.path.basename(PLANTED)}: interpret.py exited {r.returncode}: "
                            f"{(r.stdout + r.stderr).strip()[-2000:]}")
        else:
            for c in planted:
                why = c.verdict()
                print(f"planted, {'INCORRECT as it must be' if why else 'PASSED, which it must not'}: {c.label}"
                      f"{': ' + why if why else ''}")
                if why is None:
                    failures.append(f"the planted {c.label} passed the check")

    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
