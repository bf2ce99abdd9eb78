#!/usr/bin/env python3
"""tools/plot_report.py on a fixture report that this test writes itself: a block-size
sweep of two CUDA-like variants plus one without a block size. Both PNGs must appear
and be PNG files; the fixture must itself validate against the report schema.
Then the ceiling check: records above 100% of the roofline with a byte model larger than
the device's last-level cache are named in a warning (by the report's above_ceiling flag,
or by the same rule where an older report has no flag); a large record below 100% and a
small one above it (cache-resident: honest) are not."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def record(variant, name, block_size, median_us, numeric="fp32", op="layernorm_forward", nbytes=50.4e6, pct=None):
    return {
        "op": op, "backend": "cuda", "variant": variant, "variant_name": name,
        "numeric_class": numeric, "source": f"variants/layernorm_forward/0{variant}_{name}.cu", "source_hash": "",
        "params": {} if block_size is None else {"block_size": block_size},
        "shape": {"B": 8, "T": 1024, "C": 768}, "omitted": [], "seed": 1, "status": "ok", "reason": "", "deterministic": True,
        "errors": [], "model": {"bytes": nbytes, "flops": 50.3e6},
        "timing": {"median_us": median_us, "min_us": median_us * 0.98, "mean_us": median_us, "stddev_us": 0.1,
                   "cv": 0.01, "repetitions": 20, "iterations": 100},
        "throughput": {"gbps": 50.4e6 / median_us * 1e-3, "tflops": 50.3e6 / median_us * 1e-6,
                       "pct_of_copy": 50.4e6 / median_us * 1e-3 / 30.0, "pct_of_matmul": 0.1,
                       "pct_of_roofline": 50.4e6 / median_us * 1e-3 / 30.0 if pct is None else pct},
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plot", required=True)
    parser.add_argument("--schema", required=True)
    args = parser.parse_args()
    records = [record(3, "warp_per_row", bs, t) for bs, t in [(32, 40.0), (64, 30.0), (128, 25.0), (256, 26.0)]]
    records += [record(6, "vec4_registers", bs, t) for bs, t in [(64, 21.0), (128, 19.5), (256, 20.0)]]
    records += [record(2, "three_kernels_no_block", None, 60.0)]
    report = {
        "schema": "wb.report/2",
        "context": {
            "created": "2026-11-21T12:00:00Z", "command": "fixture", "host": "test",
            "source": {"commit": "unknown", "dirty": False},
            "build": {k: "" for k in ["wb_version", "build_type", "cxx_compiler", "cxx_flags", "cuda_compiler",
                                      "cuda_flags", "cuda_architectures", "benchmark_engine"]},
            "device": {"backend": "cuda", "name": "Fixture GPU", "slug": "fixture-gpu", "multiprocessors": 1,
                       "memory_bytes": 1, "l2_bytes": 50 << 20, "compute_capability": "9.0", "clock_khz": 1,
                       "memory_clock_khz": 1, "memory_bus_bits": 1, "driver_version": "", "runtime_version": "", "emulation_flavour": ""},
            "timing": {"repetitions": 20, "min_time_s": 0.01, "warmup_s": 0.05, "l2_flush": True},
            "ceilings": {"copy_gbps": 3000.0, "fp32_tflops": 50.0, "tf32_tflops": 400.0, "bf16_tflops": 700.0,
                         "method": "fixture"},
        },
        "records": records,
    }
    with open(args.schema) as f:
        schema = json.load(f)
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fixture.json")
        with open(path, "w") as f:
            json.dump(report, f)
        out = os.path.join(tmp, "plots")
        subprocess.run([sys.executable, args.plot, path, "--out", out], check=True)
        for name in ("layernorm_forward_block_sizes.png", "best_of_peak.png"):
            with open(os.path.join(out, name), "rb") as f:
                data = f.read()
            assert data.startswith(PNG_MAGIC) and len(data) > 5000, (name, len(data))
        bad = subprocess.run([sys.executable, args.plot, os.path.join(tmp, "missing.json"), "--out", out])
        assert bad.returncode == 2, bad.returncode

        # The ceiling check. adamw: 3.5 GB at 224%, no flag (an older report): the rule
        # flags it. global_norm: flagged by the report itself. encoder: 3.5 GB at 80%,
        # residual: 1 MB at 150% (inside the 50 MiB cache): neither.
        flagged = record(2, "simd_float", None, 50.0, op="adamw", nbytes=3.485e9, pct=224.4)
        marked = record(2, "chunked_simd", None, 9.6, op="global_norm", nbytes=4.98e8, pct=168.2)
        marked["throughput"]["above_ceiling"] = True
        large = record(2, "simd", None, 200.0, op="encoder_forward", nbytes=3.485e9, pct=80.0)
        small = record(2, "simd", None, 1.0, op="residual_forward", nbytes=1.0e6, pct=150.0)
        small["throughput"]["above_ceiling"] = False
        report["records"] = [flagged, marked, large, small]
        jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
        with open(path, "w") as f:
            json.dump(report, f)
        run = subprocess.run([sys.executable, args.plot, path, "--out", out], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        warned = [line.split()[2] for line in run.stderr.splitlines() if "WARNING" in line]
        assert sorted(warned) == ["adamw", "global_norm"], run.stderr
        assert "224% of the roofline" in run.stderr, run.stderr
    print("plots written and checked; the records above the ceiling beyond the cache were named, the others not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
