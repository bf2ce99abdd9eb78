#!/usr/bin/env python3
"""tools/regression_gate.sh end to end on the CPU backend: record baselines of two ops,
compare a fresh sweep with them (pass), then make one baseline much faster than the
machine can be (the new sweep is then a regression: exit 1), then give it another
device's name (exit 2)."""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gate", required=True)
    ap.add_argument("--build-dir", required=True)
    a = ap.parse_args()
    env = dict(os.environ, WB_BUILD_DIR=a.build_dir, WB_GATE_SWEEP_ARGS="--repetitions 3 --min-time 0.002")
    ops = ["residual_forward", "matmul_forward"]
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "baseline")
        common = [a.gate, "--no-build", "--backend", "cpu", "--shape", "B=2,T=16,C=64", "--baseline-dir", base,
                  "--out-dir", os.path.join(tmp, "out")]

        def gate(*extra):
            return subprocess.run(["bash", *common, *extra, *ops], env=env, capture_output=True, text=True)

        r = gate("--record")
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(os.path.basename(p) for p in glob.glob(base + "/*.json")) == sorted(o + ".json" for o in ops)

        r = gate("--max-slowdown", "1000000%")  # no timing noise, however busy the machine, fails this
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.count("PASS") == 2, r.stdout

        path = os.path.join(base, "matmul_forward.json")
        with open(path) as f:
            report = json.load(f)
        for rec in report["records"]:
            if rec["timing"]:
                rec["timing"]["median_us"] /= 1e7
                rec["timing"]["stddev_us"] = 0.0
        with open(path, "w") as f:
            json.dump(report, f)
        r = gate()
        assert r.returncode == 1, r.stdout + r.stderr
        assert "**SLOWER**" in r.stdout and "FAIL" in r.stdout, r.stdout

        report["context"]["device"]["name"] = "Another Machine"
        with open(path, "w") as f:
            json.dump(report, f)
        r = gate()
        assert r.returncode == 2, r.stdout + r.stderr
    print("regression gate: pass, regression and device mismatch all give their exit codes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
