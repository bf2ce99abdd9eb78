#!/usr/bin/env python3
"""tools/plot_report.py on a fixture report that this test writes itself: a block-size
sweep of two CUDA-like variants plus one without a block size. Both PNGs must appear
and be PNG files; the fixture must itself validate against the report schema."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def record(variant, name, block_size, median_us, numeric="fp32"):
    return {
        "op": "layernorm_forward", "backend": "cuda", "variant": variant, "variant_name": name,
        "numeric_class": numeric, "source": f"variants/layernorm_forward/0{variant}_{name}.cu", "source_hash": "",
        "params": {} if block_size is None else {"block_size": block_size},
        "shape": {"B": 8, "T": 1024, "C": 768}, "omitted": [], "seed": 1, "status": "ok", "reason": "", "deterministic": True,
        "errors": [], "model": {"bytes": 50.4e6, "flops": 50.3e6},
        "timing": {"median_us": median_us, "min_us": median_us * 0.98, "mean_us": median_us, "stddev_us": 0.1,
                   "cv": 0.01, "repetitions": 20, "iterations": 100},
        "throughput": {"gbps": 50.4e6 / median_us * 1e-3, "tflops": 50.3e6 / median_us * 1e-6,
                       "pct_of_copy": 50.4e6 / median_us * 1e-3 / 30.0, "pct_of_matmul": 0.1,
                       "pct_of_roofline": 50.4e6 / median_us * 1e-3 / 30.0},
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
                       "memory_bytes": 1, "l2_bytes": 1, "compute_capability": "9.0", "clock_khz": 1,
                       "memory_clock_khz": 1, "memory_bus_bits": 1, "driver_version": "", "runtime_version": "", "emulation_flavour": ""},
            "timing": {"repetitions": 20, "min_time_s": 0.01, "warmup_s": 0.05, "l2_flush": True},
            "ceilings": {"copy_gbps": 3000.0, "fp32_tflops": 50.0, "tf32_tflops": 400.0, "bf16_tflops": 700.0,
                         "method": "fixture"},
        },
        "records": records,
    }
    with open(args.schema) as f:
        jsonschema.validate(report, json.load(f), cls=jsonschema.Draft202012Validator)
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
    print("plots written and checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
