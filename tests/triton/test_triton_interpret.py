#!/usr/bin/env python3
"""The Triton rungs are correct under Triton's interpreter, and the check can tell when
one is not: through tools/triton/interpret.py's protocol (docs/triton.md), as wb's emu
backend will call it.

- gelu_forward's and softmax_forward's rungs at wb's check shapes (the ragged ones
  included: gelu N=2053, softmax V=101 Vp=104) and several launch parameters, on fresh
  random inputs (the seed printed, so that a failure reproduces with --seed), outputs
  poisoned with NaN, against a float64 reference in numpy with the ops' tolerances
  (|out - ref| <= atol + rtol |ref| per element, NaN never passes);
- the planted controls under tests/triton/planted/ (softmax with its mask one column
  too wide, and without its online rescale) are INCORRECT at shapes where their fault
  shows, so that the check above cannot pass a broken rung;
- interpret.py refuses a bad request with exit 2 and a message, and fails (exit 1) a
  kernel that writes outside its tensor.

Skipped (77) without the project's venv (torch and triton). Exit 0 when every case
holds, 1 otherwise, each failure named.
"""
import argparse
import json
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
GELU = os.path.join(ROOT, "variants", "gelu_forward", "03_triton_sigmoid.py")
SOFTMAX = os.path.join(ROOT, "variants", "softmax_forward", "06_triton_online.py")
PLANTED = os.path.join(ROOT, "tests", "triton", "planted", "softmax_forward")
MASK_OFF_BY_ONE = os.path.join(PLANTED, "07_triton_mask_off_by_one.py")
NO_RESCALE = os.path.join(PLANTED, "08_triton_no_rescale.py")

# The ops' tolerances (contract/ops/elementwise.cpp, classifier.cpp): (atol, rtol).
GELU_TOL = (1e-5, 1e-5)
SOFTMAX_TOL = (1e-8, 1e-4)

# wb's check shapes (contract/shape.cpp), the dimensions these ops read.
GELU_SHAPES = {"tiny": 2 * 3 * 8, "odd": 3 * 37 * 75, "ragged": 2053, "ragged8": 517, "wide": 70001, "long": 4099}
SOFTMAX_SHAPES = {"tiny": (2, 3, 11, 16), "odd": (3, 37, 101, 128), "ragged": (3, 43, 101, 104),
                  "ragged8": (1, 17, 300, 328), "gpt2": (2, 64, 1000, 1024), "vocab": (1, 5, 50257, 50304)}


def gelu_reference(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def softmax_reference(logits, V):
    x = logits.astype(np.float64)[:, :V]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    out = np.zeros(logits.shape)
    out[:, :V] = e / e.sum(axis=1, keepdims=True)
    return out


class Case:
    """One request: its inputs written, its output poisoned, its reference kept."""

    def __init__(self, folder, label, rung, fields, params, tensors, output, reference, tol):
        self.label, self.rung, self.output, self.reference, self.tol = label, rung, output, reference, tol
        self.dir = os.path.join(folder, label.replace(" ", "_").replace("=", "").replace(",", "_"))
        os.makedirs(self.dir)
        request = {"schema": "wb.triton_interpret/1", "fields": fields, "params": params, "tensors": {}}
        for name, array in tensors.items():
            array.tofile(os.path.join(self.dir, name + ".bin"))
            request["tensors"][name] = {"in": name + ".bin", "count": int(array.size)}
        request["tensors"][output]["out"] = output + ".out.bin"
        self.request = os.path.join(self.dir, "request.json")
        with open(self.request, "w") as f:
            json.dump(request, f)

    def verdict(self):
        """None when correct, else why not."""
        path = os.path.join(self.dir, self.output + ".out.bin")
        if not os.path.exists(path):
            return "no output written"
        out = np.fromfile(path, dtype=np.float32).astype(np.float64).reshape(self.reference.shape)
        atol, rtol = self.tol
        bad = ~(np.abs(out - self.reference) <= atol + rtol * np.abs(self.reference))  # NaN is bad
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape)
            return (f"{int(bad.sum())} of {bad.size} values outside the tolerance, the first at {tuple(map(int, i))}: "
                    f"{out[i]!r}, the reference {self.reference[i]!r}")
        return None


def gelu_case(folder, rng, shape, n, params):
    x = rng.uniform(-4, 4, n).astype(np.float32)
    poisoned = np.full(n, np.nan, np.float32)
    return Case(folder, f"gelu {shape} {Case_params(params)}", GELU, {"N": n}, params,
                {"out": poisoned, "inp": x}, "out", gelu_reference(x), GELU_TOL)


def softmax_case(folder, rng, shape, dims, params, rung=SOFTMAX, tag=""):
    B, T, V, Vp = dims
    logits = rng.uniform(-4, 4, (B * T, Vp)).astype(np.float32)
    # As wb's input generator does (contract/ops/classifier.cpp): rows moved past where
    # exp overflows or underflows, so that a kernel that skips the max fails.
    logits[1::4, :V] += 90.0
    logits[3::4, :V] -= 90.0
    poisoned = np.full((B * T, Vp), np.nan, np.float32)
    return Case(folder, f"softmax{tag} {shape} {Case_params(params)}", rung, {"B": B, "T": T, "V": V, "Vp": Vp},
                params, {"probs": poisoned, "logits": logits}, "probs", softmax_reference(logits, V), SOFTMAX_TOL)


def Case_params(params):
    return ",".join(f"{k}={v}" for k, v in params.items()) or "defaults"


def interpret(rung, cases):
    r = subprocess.run([sys.executable, INTERPRET, rung] + [c.request for c in cases],
                       capture_output=True, text=True, timeout=600)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, help="the inputs' seed (default: fresh, printed)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed} (rerun with --seed {seed})")
    rng = np.random.default_rng(seed)
    failures = []

    with tempfile.TemporaryDirectory(prefix="wb-triton-interpret-") as folder:
        # The rungs: every check shape at the defaults, the ragged ones across parameters.
        gelu = [gelu_case(folder, rng, s, n, {}) for s, n in GELU_SHAPES.items()]
        gelu += [gelu_case(folder, rng, "ragged", GELU_SHAPES["ragged"], {"block": b, "num_warps": 8})
                 for b in (512, 4096)]
        softmax = [softmax_case(folder, rng, s, d, {}) for s, d in SOFTMAX_SHAPES.items()]
        softmax += [softmax_case(folder, rng, s, SOFTMAX_SHAPES[s], {"block_v": b})
                    for s in ("ragged", "ragged8", "gpt2") for b in (256, 4096)]
        for rung, cases in ((GELU, gelu), (SOFTMAX, softmax)):
            r = interpret(rung, cases)
            if r.returncode != 0:
                failures.append(f"{os.path.basename(rung)}: interpret.py exited {r.returncode}: "
                                f"{(r.stdout + r.stderr).strip()[-2000:]}")
                continue
            for c in cases:
                why = c.verdict()
                print(f"{'ok' if why is None else 'INCORRECT'}: {c.label}{'' if why is None else ': ' + why}")
                if why:
                    failures.append(f"{c.label}: {why}")

        # The planted controls: INCORRECT where their fault shows. The mask one column too
        # wide shows wherever V < Vp; the missing rescale wherever a row takes several tiles.
        planted = [(MASK_OFF_BY_ONE, [softmax_case(folder, rng, s, SOFTMAX_SHAPES[s], {}, MASK_OFF_BY_ONE, " mask+1")
                                      for s in ("tiny", "ragged", "ragged8")]),
                   (NO_RESCALE, [softmax_case(folder, rng, "ragged8", SOFTMAX_SHAPES["ragged8"], {"block_v": 256},
                                              NO_RESCALE, " no-rescale"),
                                 softmax_case(folder, rng, "vocab", SOFTMAX_SHAPES["vocab"], {}, NO_RESCALE,
                                              " no-rescale")])]
        for rung, cases in planted:
            r = interpret(rung, cases)
            if r.returncode not in (0, 1):
                failures.append(f"{os.path.basename(rung)}: interpret.py exited {r.returncode}: "
                                f"{(r.stdout + r.stderr).strip()[-2000:]}")
                continue
            for c in cases:
                why = c.verdict()
                print(f"planted, {'INCORRECT as it must be' if why else 'PASSED, which it must not'}: {c.label}"
                      f"{': ' + why if why else ''}")
                if why is None:
                    failures.append(f"the planted {c.label} passed the check")

        failures += protocol_cases(folder, rng)

    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


OUT_OF_BOUNDS = '''# gelu_forward, planted Triton rung 9: writes one BLOCK past the end of out.
#
# Idea: a planted control for interpret.py's guard bands.
# Why: a write outside a tensor must fail the run, not pass silently.
# Limits: none.
import triton
import triton.language as tl


@triton.jit
def past_the_end(out, inp, N, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets + BLOCK, tl.load(inp + offsets, mask=offsets < N), mask=offsets < N)


WB_TRITON = {
    "summary": "planted: writes past the end",
    "numeric": "fp32",
    "fields": {"out": "*fp32", "inp": "*fp32", "N": "i64"},
    "params": {"block": {"values": [16], "default": 16, "constexpr": "BLOCK"},
               "num_warps": {"values": [1], "default": 1}, "num_stages": {"values": [1], "default": 1}},
    "launches": [{"kernel": past_the_end, "grid": ["cdiv(N, block)"], "args": {"out": "out", "inp": "inp", "N": "N"}}],
}
'''


def protocol_cases(folder, rng):
    """interpret.py's own answers: bad requests exit 2 with a message, an out-of-bounds
    write exits 1 and writes nothing."""
    failures = []
    c = gelu_case(folder, rng, "protocol", 100, {})
    with open(c.request) as f:
        good = json.load(f)
    bad = {
        "an unknown parameter": dict(good, params={"blok": 512}),
        "an illegal value": dict(good, params={"block": 333}),
        "a missing field": dict(good, fields={}),
        "a short tensor file": dict(good, tensors=dict(good["tensors"], inp={"in": "inp.bin", "count": 101})),
        "another schema": dict(good, schema="wb.report/1"),
    }
    for what, request in bad.items():
        path = os.path.join(c.dir, "bad.json")
        with open(path, "w") as f:
            json.dump(request, f)
        r = subprocess.run([sys.executable, INTERPRET, GELU, path], capture_output=True, text=True, timeout=300)
        if r.returncode != 2 or "interpret.py:" not in r.stderr:
            failures.append(f"interpret.py on a request with {what}: exit {r.returncode} (want 2 and a message): "
                            f"{r.stderr.strip()[-300:]}")
        else:
            print(f"ok: a request with {what} is refused: {r.stderr.strip().splitlines()[-1]}")
    planted_dir = os.path.join(folder, "planted", "gelu_forward")
    os.makedirs(planted_dir)
    rung = os.path.join(planted_dir, "09_triton_past_the_end.py")
    with open(rung, "w") as f:
        f.write(OUT_OF_BOUNDS)
    r = subprocess.run([sys.executable, INTERPRET, rung, c.request], capture_output=True, text=True, timeout=300)
    if r.returncode != 1 or "wrote outside out" not in r.stdout or os.path.exists(os.path.join(c.dir, "out.out.bin")):
        failures.append(f"a write past the end: exit {r.returncode} (want 1, 'wrote outside out', no output): "
                        f"{(r.stdout + r.stderr).strip()[-300:]}")
    else:
        print(f"ok: a write past the end fails the run: {r.stdout.strip()}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
