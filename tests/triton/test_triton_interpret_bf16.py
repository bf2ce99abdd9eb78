#!/usr/bin/env python3
"""The bf16 tensor-core Triton rungs are correct under Triton's interpreter, and the check
can tell when one is not: through tools/triton/interpret.py's protocol (docs/triton.md).

- matmul_forward_bf16's rung (variants/matmul_forward_bf16/07_triton_dot.py) at wb's
  emulated check shapes that the interpreter runs in seconds (tiny, odd, ragged,
  ragged8, flash_small; and "tall", 10 row tiles: two groups of the launch order) and
  several tile shapes, on fresh random bf16 inputs in [-1, 1) (the seed printed:
  --seed reproduces), the output poisoned with NaN, against a float64
  reference on the same bf16 values with the op's bf16 tolerance (matmul.cpp: summed
  over C, 1.5e-2 sqrt(C) + 1e-2 |ref|, plus half a bf16 ulp at the reference, as
  workbench/runtime/validate.cpp applies it), and rounded once to nearest (the mean
  signed error in ulps near 0, where truncation gives -0.5); and with a null bias (the
  contract allows it), calling the kernel in this process, since the protocol has no
  null tensor;
- attention_forward_bf16's rung (variants/attention_forward_bf16/05_triton_flash.py) at
  the shapes whose head fits its tile (tiny, odd, ragged, flash_small, flash, vocab;
  C / NH <= 64, as the CUDA flash rung requires) and three tile shapes, out (bf16) and
  lse (fp32) against float64 with the op's bf16 tolerances (attention.cpp); at ragged8
  (a head of 68) every value must be NaN, the rung's refusal;
- the planted controls are INCORRECT where their fault shows:
  tests/triton/planted/matmul_forward_bf16/08_triton_whole_slabs.py (its k loop covers
  only whole BLOCK_K slabs) wherever C % BLOCK_K != 0, and
  tests/triton/planted/attention_forward_bf16/06_triton_no_rescale.py (the accumulator
  not rescaled when a row's maximum grows) wherever rows stream several key tiles.

bf16 tensors travel as the 16 bits of each value. interpret.py fixes two bugs of Triton
3.6's interpreter on bf16 (tools/triton/bf16_fixes.py: a tl.dot of bf16 multiplies bit
patterns; a cast to bf16 truncates). Skipped (77) without the project's venv. Exit 0 when every case holds, 1
otherwise, each failure named.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

# Before triton is imported (needs.modules imports it): the null-bias case calls a
# kernel in this process, under the interpreter.
os.environ["TRITON_INTERPRET"] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import needs  # noqa: E402

needs.modules("torch", "triton", "numpy")
import numpy as np  # noqa: E402

ROOT = needs.ROOT
sys.path.insert(0, os.path.join(ROOT, "tools", "triton"))
INTERPRET = os.path.join(ROOT, "tools", "triton", "interpret.py")
MATMUL = os.path.join(ROOT, "variants", "matmul_forward_bf16", "07_triton_dot.py")
FLASH = os.path.join(ROOT, "variants", "attention_forward_bf16", "05_triton_flash.py")
WHOLE_SLABS = os.path.join(HERE, "planted", "matmul_forward_bf16", "08_triton_whole_slabs.py")
NO_RESCALE = os.path.join(HERE, "planted", "attention_forward_bf16", "06_triton_no_rescale.py")

# wb's emulated check shapes (contract/shape.cpp, named_check_shapes(true)): the dims the
# ops read.
SHAPES = {
    "tiny": dict(B=2, T=3, C=8, NH=2, OC=12),
    "odd": dict(B=3, T=37, C=75, NH=3, OC=221),
    "ragged": dict(B=3, T=43, C=168, NH=3, OC=221),
    "ragged8": dict(B=1, T=17, C=136, NH=2, OC=136),
    "flash_small": dict(B=1, T=40, C=64, NH=2, OC=64),
    "flash": dict(B=1, T=200, C=64, NH=1, OC=136),
    "vocab": dict(B=1, T=5, C=96, NH=2, OC=384),
    # Not one of wb's: B*T = 600 rows make 10 row tiles of 64, so that the matmul rung's
    # launch order has a whole group of GROUP_M = 8 row tiles and a partial one of 2.
    "tall": dict(B=2, T=300, C=40, NH=1, OC=72),
}


# --- bf16 as numpy holds it: the top 16 bits of a float32 ---------------------------

from bf16_fixes import from_bf16_bits, to_bf16_bits  # noqa: E402
import bf16_fixes  # noqa: E402


def bf16_ulp(ref):
    """The spacing of bf16 values at |ref| (contract/op.cpp's bf16_ulp)."""
    m, e = np.frexp(np.abs(ref))
    return np.where(m == 0, 2.0 ** -133, np.ldexp(1.0, np.maximum(e - 1, -126) - 7))


def random_bf16(rng, shape):
    """bf16 bits of uniform [-1, 1) values (wb's default input), and the values."""
    bits = to_bf16_bits(rng.uniform(-1, 1, shape).astype(np.float32))
    return bits, from_bf16_bits(bits).astype(np.float64)


def tolerance_used(out, ref, tol):
    """The largest |out - ref| / (atol + rtol |ref| + ulps ulp(ref)): how close it came."""
    atol, rtol, ulps = tol
    return float(np.max(np.abs(out - ref) / (atol + rtol * np.abs(ref) + ulps * bf16_ulp(ref)), initial=0.0))


def judged(out, ref, tol):
    """None when |out - ref| <= atol + rtol |ref| + ulps ulp(ref) everywhere (NaN never
    passes), else why not."""
    atol, rtol, ulps = tol
    bad = ~(np.abs(out - ref) <= atol + rtol * np.abs(ref) + ulps * bf16_ulp(ref))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape)
        return (f"{int(bad.sum())} of {bad.size} values outside the tolerance, the first at "
                f"{tuple(map(int, i))}: {out[i]!r}, the reference {ref[i]!r}")
    return None


# The rounding test of a bf16 output: over the elements with |ref| >= 1/4 (where the
# fp32 arithmetic's error is a small part of an ulp), the mean of (out - ref) sign(ref)
# in ulps. Rounding to nearest leaves it near 0 (the standard deviation of one element's
# is about 0.3 ulp), truncation near -0.5. Judged from 1000 elements on (the mean's own
# standard deviation is then under 0.01 ulp).
BIAS_MIN_ELEMENTS = 1000
BIAS_LIMIT_ULPS = 0.1


def rounding_bias(out, ref):
    """None when out's bf16 rounding shows no bias (or too few elements to tell)."""
    sel = np.abs(ref) >= 0.25
    if sel.sum() < BIAS_MIN_ELEMENTS:
        return None
    bias = float(np.mean((out[sel] - ref[sel]) * np.sign(ref[sel]) / bf16_ulp(ref[sel])))
    if abs(bias) > BIAS_LIMIT_ULPS:
        return (f"within the tolerance, but the mean signed error is {bias:+.3f} ulp over {int(sel.sum())} "
                f"elements (limit {BIAS_LIMIT_ULPS}): not one rounding to nearest")
    return None


class Case:
    """One request: its inputs written, its outputs poisoned, their references kept."""

    def __init__(self, folder, label, fields, params, inputs, outputs):
        """inputs: name -> array (uint16 bf16 bits, float32); outputs: name -> (poisoned
        array, reference, tolerance)."""
        self.label, self.outputs = label, outputs
        self.dir = os.path.join(folder, "".join(ch if ch.isalnum() else "_" for ch in label))
        os.makedirs(self.dir)
        request = {"schema": "wb.triton_interpret/1", "fields": fields, "params": params, "tensors": {}}
        for name, array in list(inputs.items()) + [(n, o[0]) for n, o in outputs.items()]:
            array.tofile(os.path.join(self.dir, name + ".bin"))
            request["tensors"][name] = {"in": name + ".bin", "count": int(array.size)}
        for name in outputs:
            request["tensors"][name]["out"] = name + ".out.bin"
        self.request = os.path.join(self.dir, "request.json")
        with open(self.request, "w") as f:
            json.dump(request, f)

    def verdict(self):
        self.used = {}
        for name, (poisoned, ref, tol) in self.outputs.items():
            path = os.path.join(self.dir, name + ".out.bin")
            if not os.path.exists(path):
                return f"{name}: no output written"
            raw = np.fromfile(path, dtype=poisoned.dtype)
            out = (from_bf16_bits(raw) if poisoned.dtype == np.uint16 else raw).astype(np.float64)
            why = judged(out.reshape(ref.shape), ref, tol)
            if why is None:
                self.used[name] = tolerance_used(out.reshape(ref.shape), ref, tol)
            if why is None and poisoned.dtype == np.uint16:
                why = rounding_bias(out.reshape(ref.shape), ref)
            if why:
                return f"{name}: {why}"
        return None


def params_text(params):
    return ",".join(f"{k}={v}" for k, v in params.items()) or "defaults"


# --- matmul_forward_bf16 ---------------------------------------------------------------

def matmul_tol(C):
    # matmul.cpp: summed_over("C") in the bf16 class, plus half an ulp (bf16_twin).
    return (1.5e-2 * math.sqrt(max(1.0, C)), 1e-2, 0.5)


def matmul_inputs(rng, d):
    M, C, OC = d["B"] * d["T"], d["C"], d["OC"]
    inp, x = random_bf16(rng, (M, C))
    weight, w = random_bf16(rng, (OC, C))
    bias, b = random_bf16(rng, (OC,))
    return (inp, weight, bias), (x, w, b)


def matmul_case(folder, rng, shape, params, tag=""):
    d = SHAPES[shape]
    (inp, weight, bias), (x, w, b) = matmul_inputs(rng, d)
    ref = x @ w.T + b
    poisoned = np.full(ref.shape, 0x7FC0, np.uint16)  # a bf16 NaN
    fields = {k: d[k] for k in ("B", "T", "C", "OC")}
    return Case(folder, f"matmul_forward_bf16{tag} {shape} {params_text(params)}", fields, params,
                {"inp": inp, "weight": weight, "bias": bias}, {"out": (poisoned, ref, matmul_tol(d["C"]))})


def matmul_null_bias(rng, shape, params):
    """The rung's kernel with a null bias, called here under the interpreter (the
    protocol cannot pass a null pointer): out must be inp @ weight^T alone."""
    import torch
    import interpret
    import rung as rungs
    interpret.work_around_scalar_conversion()
    bf16_fixes.patch()
    r = rungs.load(MATMUL)
    params = r.complete(params)
    d = SHAPES[shape]
    (inp, weight, _), (x, w, _) = matmul_inputs(rng, d)
    bf = lambda a: torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)  # noqa: E731
    out = torch.full((d["B"] * d["T"], d["OC"]), float("nan"), dtype=torch.bfloat16)
    null = torch.empty(0, dtype=torch.bfloat16)
    if null.data_ptr() != 0:
        return "skipped: an empty torch tensor has a non-null address here"
    launch = r.launches[0]
    env = dict({k: d[k] for k in ("B", "T", "C", "OC")}, **params)
    grid = tuple(g.value(env) for g in launch.grid)
    with np.errstate(all="ignore"):
        launch.kernel[grid](out, bf(inp), bf(weight), null, d["B"] * d["T"], d["C"], d["OC"],
                            **{c: params[p] for c, p in launch.constexprs.items()},
                            num_warps=params["num_warps"], num_stages=params["num_stages"])
    got = from_bf16_bits(out.view(torch.int16).numpy().view(np.uint16)).astype(np.float64)
    return judged(got, x @ w.T, matmul_tol(d["C"]))


# --- attention_forward_bf16 -----------------------------------------------------------

# attention.cpp: out elementwise(1e-5, 1e-4) and lse elementwise(2e-5, 1e-5), in the bf16
# class (2e-2, 2e-2); out, a bf16 output, plus half an ulp; lse stays fp32.
ATTENTION_OUT_TOL = (2e-2, 2e-2, 0.5)
ATTENTION_LSE_TOL = (2e-2, 2e-2, 0.0)


def attention_reference(qkv, B, T, C, NH):
    """(out (B, T, C), lse (B, NH, T)) in float64 from qkv (B, T, 3C)."""
    hs = C // NH
    heads = lambda i: qkv[:, :, i * C:(i + 1) * C].reshape(B, T, NH, hs).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(0), heads(1), heads(2)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hs)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    top = s.max(axis=-1, keepdims=True)
    lse = top + np.log(np.exp(s - top).sum(axis=-1, keepdims=True))
    out = np.exp(s - lse) @ v
    return out.transpose(0, 2, 1, 3).reshape(B, T, C), lse[..., 0]


def attention_case(folder, rng, shape, params, rung_tag=""):
    d = SHAPES[shape]
    B, T, C, NH = d["B"], d["T"], d["C"], d["NH"]
    qkv, x = random_bf16(rng, (B, T, 3 * C))
    out, lse = attention_reference(x, B, T, C, NH)
    return Case(folder, f"attention_forward_bf16{rung_tag} {shape} {params_text(params)}",
                {"B": B, "T": T, "C": C, "NH": NH}, params, {"qkv": qkv},
                {"out": (np.full(out.shape, 0x7FC0, np.uint16), out, ATTENTION_OUT_TOL),
                 "lse": (np.full(lse.shape, np.nan, np.float32), lse, ATTENTION_LSE_TOL)})


def all_nan(case):
    """None when every out and lse value of the case is NaN (a head wider than the
    rung's tile, refused loudly), else why not."""
    for name, (poisoned, ref, _) in case.outputs.items():
        path = os.path.join(case.dir, name + ".out.bin")
        if not os.path.exists(path):
            return f"{name}: no output written"
        raw = np.fromfile(path, dtype=poisoned.dtype)
        got = from_bf16_bits(raw) if poisoned.dtype == np.uint16 else raw
        if not np.isnan(got).all():
            return f"{name}: {int((~np.isnan(got)).sum())} of {got.size} values are not NaN"
    return None


# --- running -------------------------------------------------------------------------

def interpret_cases(rung, cases, planted=False):
    """Runs cases through interpret.py; the failures (for a planted rung: the cases that
    passed)."""
    r = subprocess.run([sys.executable, INTERPRET, rung] + [c.request for c in cases],
                       capture_output=True, text=True, timeout=600)
    if r.returncode not in ((0, 1) if planted else (0,)):
        return [f"{os.path.basename(rung)}: interpret.py exited {r.returncode}: {(r.stdout + r.stderr).strip()[-2000:]}"]
    failures = []
    for c in cases:
        why = c.verdict()
        if planted:
            print(f"planted, {'INCORRECT as it must be' if why else 'PASSED, which it must not'}: {c.label}"
                  f"{': ' + why if why else ''}")
            if why is None:
                failures.append(f"the planted {c.label} passed the check")
        else:
            used = ", ".join(f"{n} {100 * u:.1f}%" for n, u in c.used.items())
            print(f"{'ok' if why is None else 'INCORRECT'}: {c.label}"
                  f"{' (of the tolerance: ' + used + ')' if why is None else ': ' + why}")
            if why:
                failures.append(f"{c.label}: {why}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, help="the inputs' seed (default: fresh, printed)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed} (rerun with --seed {seed})")
    rng = np.random.default_rng(seed)
    failures = []
    start = time.monotonic()

    with tempfile.TemporaryDirectory(prefix="wb-triton-interpret-bf16-") as folder:
        # matmul: every shape at the defaults (128 x 128 x 64), the ragged ones at the
        # small tiles too (several row and column tiles, a partial last k slab of 40 or 8).
        small = {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2}
        mixed = {"block_m": 128, "block_n": 64, "num_stages": 4}
        cases = [matmul_case(folder, rng, s, {}) for s in ("tiny", "odd", "ragged", "ragged8", "flash_small")]
        cases += [matmul_case(folder, rng, s, p) for s in ("odd", "ragged", "ragged8") for p in (small, mixed)]
        cases += [matmul_case(folder, rng, "tall", small)]
        failures += interpret_cases(MATMUL, cases)

        for shape, params in (("odd", small), ("tiny", {})):
            why = matmul_null_bias(rng, shape, params)
            label = f"matmul_forward_bf16 null bias {shape} {params_text(params)}"
            print(f"{'ok' if why is None else why if why.startswith('skipped') else 'INCORRECT'}: {label}"
                  f"{'' if why is None or why.startswith('skipped') else ': ' + why}")
            if why and not why.startswith("skipped"):
                failures.append(f"{label}: {why}")

        # attention: every shape whose head fits (C / NH <= 64) at the defaults (64 x 64),
        # the ragged and multi-tile ones at the other tiles too (flash: T = 200, the last
        # query tile of 8 rows, up to four key tiles below the diagonal).
        cases = [attention_case(folder, rng, s, {}) for s in ("tiny", "odd", "ragged", "flash_small", "flash",
                                                              "vocab")]
        cases += [attention_case(folder, rng, s, p) for s in ("odd", "ragged", "flash")
                  for p in ({"block_m": 128, "block_n": 32, "num_warps": 8}, {"block_n": 32, "num_stages": 3})]
        failures += interpret_cases(FLASH, cases)
        # ragged8's head of 68 channels does not fit (the rung's Limits, as variant 4's
        # requirement): every value must be NaN, never a plausible wrong answer.
        wide = attention_case(folder, rng, "ragged8", {})
        r = subprocess.run([sys.executable, INTERPRET, FLASH, wide.request], capture_output=True, text=True,
                           timeout=600)
        why = f"interpret.py exited {r.returncode}: {(r.stdout + r.stderr).strip()[-500:]}" if r.returncode \
            else all_nan(wide)
        print(f"{'ok' if why is None else 'INCORRECT'}: {wide.label}, a head of 68 channels written as NaN"
              f"{'' if why is None else ': ' + why}")
        if why:
            failures.append(f"{wide.label}: {why}")

        # The planted control: C % BLOCK_K != 0 at every shape here but flash_small.
        planted = [matmul_case(folder, rng, s, p, " whole-slabs") for s, p in
                   (("tiny", {}), ("ragged", {}), ("ragged8", small))]
        failures += interpret_cases(WHOLE_SLABS, planted, planted=True)
        # And the flash rung without its accumulator's rescale: wrong wherever rows stream
        # several key tiles (flash: up to four of 64; ragged: two of 32).
        planted = [attention_case(folder, rng, s, p, " no-rescale") for s, p in
                   (("flash", {}), ("ragged", {"block_n": 32}))]
        failures += interpret_cases(NO_RESCALE, planted, planted=True)

    print(f"{time.monotonic() - start:.1f} s")
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
