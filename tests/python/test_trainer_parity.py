#!/usr/bin/env python3
"""The trainer against PyTorch (reference/pytorch/gpt2.py, float64).

gpt2.py writes a small GPT-2, one batch of tokens, the logits, loss and gradients of
the first step, and the losses of 10 AdamW steps with gradient clipping. The trainer
runs the same 10 steps from the same files (--debug-state writes its first step) and
every quantity must agree:
  logits (the first V columns; the padded ones must be exactly 0), the loss, the
  gradient of each of the 16 parameter tensors, and the 10 losses,
within |ours - torch| <= atol * max|torch| + rtol * |torch| per tensor (tolerances
below; tf32 kernels get looser ones). With --best, the kernels come from a best.json
made on the spot: the trainer's workloads (--dump-workloads) swept by wb and chosen by
wb best; with --kernels, from the given file (e.g. a CUDA device's choices run in
emulation). Exits 77 (ctest: skipped) for --backend cuda without a usable device.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

NAMES = ["wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb", "ln2w", "ln2b", "fcw", "fcb",
         "fcprojw", "fcprojb", "lnfw", "lnfb"]
SKIP = 77
# (atol relative to the tensor's largest value, rtol) per quantity, for fp32 kernels.
FP32 = {"logits": (1e-5, 1e-4), "loss": (0, 1e-5), "grads": (1e-4, 1e-3), "losses": (0, 1e-4)}
TF32 = {"logits": (3e-3, 3e-2), "loss": (0, 3e-3), "grads": (3e-2, 3e-1), "losses": (0, 3e-3)}


def read_state(path):
    with open(path, "rb") as f:
        header = np.frombuffer(f.read(1024), dtype=np.int32)
        assert header[0] == 20261121 and header[1] == 1, f"{path}: not a debug state"
        B, T, V, Vp, n = (int(x) for x in header[2:7])
        logits = np.frombuffer(f.read(4 * B * T * Vp), dtype=np.float32).reshape(B, T, Vp)
        loss = float(np.frombuffer(f.read(4), dtype=np.float32)[0])
        grads = np.frombuffer(f.read(4 * n), dtype=np.float32)
        assert grads.size == n, f"{path}: truncated"
    return V, logits, loss, grads


def agree(name, ours, theirs, tol):
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    scale = float(np.abs(theirs).max()) if theirs.size else 0.0
    bound = tol[0] * scale + tol[1] * np.abs(theirs)
    err = np.abs(ours - theirs)
    bad = ~(err <= bound)
    worst = float(np.max(err / np.maximum(bound, 1e-300))) if err.size else 0.0
    print(f"{'ok  ' if not bad.any() else 'FAIL'} {name}: max abs err {err.max():.3e} (scale {scale:.3e}), "
          f"worst err/bound {worst:.3f}")
    return not bad.any()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--wb", required=True)
    ap.add_argument("--gpt2", required=True, help="reference/pytorch/gpt2.py")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--V", type=int, default=50257)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--best", action="store_true", help="kernels from a best.json made by wb sweep and wb best")
    ap.add_argument("--kernels", help="kernels from this best.json instead (e.g. a CUDA device's, emulated)")
    a = ap.parse_args()
    if a.backend == "cuda":
        probe = subprocess.run([a.wb, "device", "--backend", "cuda", "--slug"], capture_output=True, text=True)
        if probe.returncode == 3:
            print(f"skipped: {probe.stderr.strip()}")
            return SKIP
    tol = TF32 if a.precision == "tf32" else FP32
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([py, a.gpt2, "--out", tmp, "--V", str(a.V)], check=True)
        with open(os.path.join(tmp, "expected.json")) as f:
            expected = json.load(f)
        c = expected["config"]
        common = ["--backend", a.backend, "--model", os.path.join(tmp, "model.bin"), "-b", str(c["B"]), "-t",
                  str(c["T"]), "--precision", a.precision]
        kernels = []
        if a.kernels:
            kernels = ["--kernels", a.kernels]
        if a.best:
            workloads = os.path.join(tmp, "workloads.json")
            subprocess.run([a.trainer, *common, "--dump-workloads", workloads], check=True)
            report = os.path.join(tmp, "sweep.json")
            subprocess.run([a.wb, "sweep", "--workloads", workloads, "--backend", a.backend, "--repetitions", "2",
                            "--min-time", "0.001", "--out", report], check=True)
            best = os.path.join(tmp, "best.json")
            subprocess.run([a.wb, "best", report, "--precision", a.precision, "--out", best], check=True)
            kernels = ["--kernels", best]
        log = os.path.join(tmp, "log.jsonl")
        state = os.path.join(tmp, "state.bin")
        subprocess.run([a.trainer, *common, *kernels, "--train", os.path.join(tmp, "tokens.bin"), "--steps",
                        str(c["steps"]), "--lr", str(c["lr"]), "--weight-decay", str(c["weight_decay"]),
                        "--grad-clip", str(c["grad_clip"]), "--beta1", "0.9", "--beta2", "0.999", "--eps", "1e-8",
                        "--peak-tflops", "1", "--log", log, "--debug-state", state], check=True)

        V, ours_logits, ours_loss, ours_grads = read_state(state)
        _, ref_logits, ref_loss, ref_grads = read_state(os.path.join(tmp, "expected_state.bin"))
        ok = agree("logits", ours_logits[..., :V], ref_logits[..., :V], tol["logits"])
        padded = ours_logits[..., V:]
        if padded.size and np.any(padded != 0):
            print("FAIL logits: the padded columns are not 0")
            ok = False
        ok &= agree("loss", [ours_loss], [ref_loss], tol["loss"])
        offset = 0
        for name in NAMES:
            n = int(np.prod(expected["shapes"][name]))
            ok &= agree(f"grad {name}", ours_grads[offset:offset + n], ref_grads[offset:offset + n], tol["grads"])
            offset += n
        with open(log) as f:
            losses = [json.loads(line)["loss"] for line in f]
        ok &= agree(f"{len(losses)} losses", losses, expected["losses"], tol["losses"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
