#!/usr/bin/env python3
"""A CPU sweep and a CPU check end to end, a sharded sweep with its merge, and an
emulated sweep with predicted times (--predict-for): the reports must validate against
the documented schema (results/wb.report-2.schema.json) and say what was run."""
import argparse
import json
import subprocess
import sys
import tempfile

import jsonschema


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wb", required=True)
    parser.add_argument("--schema", required=True)
    args = parser.parse_args()
    with open(args.schema) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    with tempfile.TemporaryDirectory() as tmp:
        sweep = f"{tmp}/sweep/layernorm.json"
        subprocess.run([args.wb, "sweep", "layernorm_forward", "--backend", "cpu", "--shape", "B=4,T=64,C=768",
                        "--variants", "no-torch", "--repetitions", "3", "--min-time", "0.005", "--out", sweep],
                       check=True)
        check = f"{tmp}/check.json"
        subprocess.run([args.wb, "check", "matmul_forward", "--backend", "cpu", "--variants", "no-torch", "--json",
                        check], check=True)
        # A sweep in two shards, an empty shard (more shards than units), and their merge;
        # the PyTorch rungs' records among them (docs/torch.md) where the venv is ready.
        tiny = [args.wb, "sweep", "layernorm_forward", "--backend", "cpu", "--shape", "B=2,T=8,C=32", "--seed", "5",
                "--repetitions", "1", "--min-time", "0.001", "--no-flush"]
        shards = [f"{tmp}/shard{k}.json" for k in (1, 2)]
        for k, path in enumerate(shards, 1):
            subprocess.run(tiny + ["--shard", f"{k}/2", "--out", path], check=True)
        empty = f"{tmp}/empty.json"
        subprocess.run(tiny + ["--shard", "1000/1000", "--out", empty], check=True)
        merged = f"{tmp}/merged.json"
        subprocess.run([args.wb, "merge", *shards, "--out", merged], check=True)
        predicted = f"{tmp}/predicted.json"
        run = subprocess.run([args.wb, "sweep", "residual_forward", "--backend", "emu", "--shape", "B=2,T=8,C=64",
                              "--seed", "5", "--predict-for", "nvidia-h100-sxm", "--out", predicted],
                             capture_output=True, text=True)
        reports = [sweep, check, shards[0], empty, merged]
        if run.returncode == 0:
            reports.append(predicted)
        elif "counting needs the plain build" in run.stderr:
            print("a predicted sweep is not validated: " + run.stderr.strip())  # a sanitizer's build
        else:
            print(run.stdout + run.stderr)
            return 1
        for path in reports:
            with open(path) as f:
                report = json.load(f)
            errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
            for e in errors:
                print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
            if errors:
                return 1

        with open(sweep) as f:
            report = json.load(f)
        records = report["records"]
        assert report["context"]["device"]["backend"] == "cpu", report["context"]
        assert report["context"]["timing"]["repetitions"] == 3, report["context"]["timing"]
        # the reference first, then the CPU ladder's rungs at each of their thread counts
        assert {r["op"] for r in records} == {"layernorm_forward"}, records
        assert records[0]["variant"] == 1 and records[0]["params"] == {}, records[0]
        assert len(records) > 1 and all(set(r["params"]) == {"threads"} for r in records[1:]), records
        assert records[0]["shape"] == {"B": 4, "T": 64, "C": 768}, records[0]["shape"]
        assert records[0]["status"] == "ok" and records[0]["timing"]["repetitions"] == 3, records[0]
        assert {e["tensor"] for e in records[0]["errors"]} == {"out", "mean", "rstd"}, records[0]["errors"]
        with open(check) as f:
            checked = json.load(f)["records"]
        # three CPU variants (plus the CPU variants' runs without a bias) on every check shape,
        # each validated without timing
        shapes = {json.dumps(r["shape"]) for r in checked}
        assert len(checked) == 3 * 2 * len(shapes), len(checked)
        assert sum(1 for r in checked if r["omitted"] == ["bias"]) == 3 * len(shapes)
        assert all(r["timing"] is None for r in checked)
        with open(empty) as f:
            report = json.load(f)
        assert report["records"] == [] and report["context"]["shard"]["index"] == 1000, report["context"]
        with open(merged) as f:
            report = json.load(f)
        assert "shard" not in report["context"], report["context"]
        assert [s["index"] for s in report["context"]["merged_from"]["shards"]] == [1, 2], report["context"]
        assert len(report["records"]) == report["context"]["merged_from"]["units"], report["context"]
        if predicted in reports:
            with open(predicted) as f:
                report = json.load(f)
            assert report["context"]["predicted_for"]["slug"] == "nvidia-h100-80gb-hbm3", report["context"]
            assert all(r["timing"] is None and r["predicted"]["us"] > 0 for r in report["records"]), report["records"]
    print("the reports validate against the schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
