#!/usr/bin/env python3
"""ci/regression_gate.sh end to end on the CPU backend: record baselines of two ops,
make them ten million times slower (a fresh sweep is then FASTER, which never fails:
exit 0), make the sweeps fail (exit 2, never comparing the reports left from before),
then make one ten million times faster than recorded (a regression: exit 1), then give
it another device's name (exit 2). The baselines are scaled so far that no
timing noise of a busy machine (OpenMP threads descheduled for milliseconds) decides."""
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
    env = dict(os.environ, WB_BUILD_DIR=a.build_dir, WB_GATE_SWEEP_ARGS="--repetitions 3 --min-time 0.002 --variants no-torch")
    ops = ["residual_forward", "matmul_forward"]
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "baseline")
        common = [a.gate, "--no-build", "--backend", "cpu", "--shape", "B=2,T=16,C=64", "--baseline-dir", base,
                  "--out-dir", os.path.join(tmp, "out")]

        def gate(*extra, sweep_args=env["WB_GATE_SWEEP_ARGS"]):
            return subprocess.run(["bash", *common, *extra, *ops], env=dict(env, WB_GATE_SWEEP_ARGS=sweep_args),
                                  capture_output=True, text=True)

        r = gate("--record")
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(os.path.basename(p) for p in glob.glob(base + "/*.json")) == sorted(o + ".json" for o in ops)

        def scale_baseline(op, factor):
            path = os.path.join(base, op + ".json")
            with open(path) as f:
                report = json.load(f)
            for rec in report["records"]:
                if rec["timing"]:
                    rec["timing"]["median_us"] *= factor
                    rec["timing"]["stddev_us"] = 0.0
            with open(path, "w") as f:
                json.dump(report, f)
            return path, report

        for op in ops:
            scale_baseline(op, 1e7)
        r = gate()
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.count("PASS") == 2 and "FASTER" in r.stdout, r.stdout

        # The sweeps fail (a bad flag): the reports of the run above, still in the out
        # folder, must not be compared in their place.
        r = gate(sweep_args="--seed not-a-number")
        assert r.returncode == 2, r.stdout + r.stderr
        assert r.stdout.count("the sweep failed (exit 2)") == 2 and "PASS" not in r.stdout, r.stdout
        r = gate("--record", sweep_args="--seed not-a-number")
        assert r.returncode == 2 and "recorded" not in r.stdout, r.stdout + r.stderr

        path, report = scale_baseline("matmul_forward", 1e-14)  # 1e7 times faster than recorded
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
