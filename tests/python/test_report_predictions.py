#!/usr/bin/env python3
"""tools/device/report.py's scoring of a wb.predictions/1 file (docs/formats.md) on a core
folder that this test writes itself: two measured (op, shape)s and four trainer logs.

A prediction is scored only by a record of the same identity (op, shape and params in any
key order, backend, variant, source_hash); a changed source_hash is listed, never scored;
a record without a time and an unmeasured configuration are not scored either. The MAPE,
the fractions within 15% and 25%, each (op, shape)'s Spearman, pick and top-3 verdicts are
held against figures computed by hand below. Steps match the run of the same precision and
launch (graph when its log says so) without --kernels, and a run of another model is not
scored. The predictions file's bytes are the same after report.py ran. Exit 0 when all
hold; an AssertionError names the first that does not."""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

SHAPE_LN = {"B": 4, "T": 64, "C": 768}
SHAPE_MM = {"B": 4, "T": 64, "C": 768, "OC": 768}
MODEL = "L=2 C=64 NH=2 V=50257 Vp=50304 maxT=1024"


def record(op, shape, variant, params, source_hash, median_us, status="ok"):
    return {"op": op, "backend": "cuda", "variant": variant, "variant_name": f"v{variant}", "params": params,
            "shape": shape, "source_hash": source_hash, "status": status, "numeric_class": "fp32",
            "timing": {"median_us": median_us} if status == "ok" else None}


def prediction(op, shape, variant, params, source_hash, us):
    return {"op": op, "shape": shape, "backend": "cuda", "variant": variant, "variant_name": f"v{variant}",
            "params": params, "source_hash": source_hash, "seconds": us * 1e-6, "bound": "dram", "counted": True}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def trainer_log(core, name, ms, graph=False, op_times=False, B=4):
    """Steps 2.. take the times of ms; step 1 (a warm-up, with a graph its capture) takes 1000."""
    lines = []
    for step, t in enumerate([1000.0] + ms, start=1):
        j = {"step": step, "loss": 5.0, "ms": t}
        if graph:
            j["graph"] = "captured" if step == 1 else "replayed"
        if op_times:
            j["op_ms"], j["outside_ms"] = t * 0.9, t * 0.1
        lines.append(json.dumps(j))
    write(os.path.join(core, "trainer", f"{name}.jsonl"), "\n".join(lines) + "\n")
    precision = name.split("-")[1]
    write(os.path.join(core, "trainer", f"{name}.log"),
          f"GPT-2 {MODEL} (3.39M parameters), B={B} T=64, cuda backend on a test GPU, precision {precision}\n")


def make_core(core):
    write(os.path.join(core, "device.txt"), "device    Test GPU (cuda backend, slug no-such-device-for-this-test)\n")
    records = [
        record("layernorm_forward", SHAPE_LN, 3, {"block_size": 128, "tile": 32}, "h3", 10.0),
        record("layernorm_forward", SHAPE_LN, 3, {"block_size": 256, "tile": 32}, "h3", 20.0),
        record("layernorm_forward", SHAPE_LN, 4, {"block_size": 256}, "h4", 15.0),
        record("layernorm_forward", SHAPE_LN, 5, {}, "h5new", 8.0),  # predicted for h5old
        record("layernorm_forward", SHAPE_LN, 6, {}, "h6", 0.0, status="incorrect"),
    ] + [record("matmul_forward", SHAPE_MM, 2, {"block_size": bs}, "m2", us)
         for bs, us in [(32, 5.0), (64, 5.2), (128, 7.0), (256, 8.0)]]
    report = {"schema": "wb.report/2", "context": {}, "records": records}
    write(os.path.join(core, "sweep", "00-test.json"), json.dumps(report))
    trainer_log(core, "default-bf16", [10.0, 12.0, 14.0], graph=True)  # 12 ms/step, a graph
    trainer_log(core, "launched-bf16", [20.0, 22.0, 24.0], op_times=True)  # 22, launched
    trainer_log(core, "best-bf16", [1.0, 1.0, 1.0], graph=True)  # --kernels best.json: never a default step
    trainer_log(core, "default-fp32", [30.0, 30.0, 30.0])
    trainer_log(core, "launched-fp32", [25.0, 25.0, 25.0], op_times=True)  # launched too: the plain run goes first


def make_predictions(path, workloads, other_workloads):
    preds = [
        prediction("layernorm_forward", {"C": 768, "B": 4, "T": 64}, 3, {"tile": 32, "block_size": 128}, "h3", 12.0),
        prediction("layernorm_forward", SHAPE_LN, 3, {"block_size": 256, "tile": 32}, "h3", 18.0),
        prediction("layernorm_forward", SHAPE_LN, 4, {"block_size": 256}, "h4", 9.0),
        prediction("layernorm_forward", SHAPE_LN, 5, {}, "h5old", 7.77),
        prediction("layernorm_forward", SHAPE_LN, 6, {}, "h6", 3.0),
        prediction("layernorm_forward", SHAPE_LN, 7, {}, "h7", 4.0),  # never measured
        prediction("layernorm_forward", {"B": 4, "T": 64, "C": 768, "OC": 1}, 4, {"block_size": 256}, "h4", 4.0),
    ] + [prediction("matmul_forward", SHAPE_MM, 2, {"block_size": bs}, "m2", us)
         for bs, us in [(32, 4.0), (64, 1.0), (128, 2.0), (256, 3.0)]]
    steps = [{"workloads": workloads, "storage": "bf16", "selection": "defaults", "launch": "graph", "ms": 15.0},
             {"workloads": workloads, "storage": "bf16", "selection": "defaults", "launch": "launched", "ms": 11.0},
             {"workloads": workloads, "storage": "fp32", "selection": "defaults", "launch": "graph", "ms": 9.0},
             {"workloads": other_workloads, "storage": "fp32", "selection": "defaults", "launch": "launched", "ms": 31.0}]
    doc = {"schema": "wb.predictions/1",
           "made": {"commit": "abc1234", "date": "2026-11-30", "model": "wb.predict/1", "command": "test"},
           "device": {"name": "Test GPU", "slug": "test-gpu"}, "predictions": preds, "steps": steps}
    write(path, json.dumps(doc, indent=1))


def run_report(report, core, out, *extra):
    done = subprocess.run([sys.executable, report, "--core", core, "--out", out, *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out) as f:
        return f.read()


def check_scored(text, pred_path):
    assert f"## Predictions made before this window: {pred_path}\n" in text, text
    assert "made at commit abc1234 by model wb.predict/1 on 2026-11-30" in text and "Scored without refit" in text
    # |errors|: layernorm 0.2, 0.1, 0.4; matmul 0.2, 4.2/5.2, 5/7, 5/8: mean 3.046978/7. Ranks
    # over all seven: predicted 6,7,5,4,1,2,3, measured 5,7,6,1,2,3,4: 1 - 6*14/(7*48) = 0.75.
    assert ("Scores: 7 of 11 predictions matched by a measurement; MAPE 43.5%; within 15%: 1 of 7 (14%); "
            "within 25%: 3 of 7 (43%); Spearman over every matched configuration: 0.75.") in text, \
        [l for l in text.splitlines() if l.startswith("Scores")]
    # Params given in another key order still match (block_size=128,tile=32, +20%).
    assert "| layernorm_forward | C=768,B=4,T=64 | cuda/3 v3 | block_size=128,tile=32 | 12.00 | 10.00 | +20.0% | within 25% |" in text
    assert "| layernorm_forward | B=4,T=64,C=768 | cuda/4 v4 | block_size=256 | 9.00 | 15.00 | -40.0% | no |" in text
    # layernorm: predicted ranks 2,3,1 against measured 1,3,2: rho = 1 - 6*2/(3*8) = 0.5; the
    # pick (v4, 15 us) is not within 5% of 10 us; the measured fastest is in the top 3.
    assert "| layernorm_forward | B=4,T=64,C=768 | 3 | 0.50 | 4 block_size=256 | 15.00 | 10.00 | no | yes |" in text
    # matmul: predicted ranks 4,1,2,3 against 1,2,3,4: rho = 1 - 6*12/(4*15) = -0.2; the pick
    # (block_size=64, 5.2 us) is within 5% of 5.0; the fastest (32) is predicted 4th.
    assert "| matmul_forward | B=4,T=64,C=768,OC=768 | 4 | -0.20 | 2 block_size=64 | 5.20 | 5.00 | yes | no |" in text


def check_unscored(text):
    assert "- layernorm_forward B=4,T=64,C=768 cuda/5 -: predicted for h5old, measured h5new" in text
    assert "7.77" not in text, "a prediction of changed code was scored"
    assert "- layernorm_forward B=4,T=64,C=768 cuda/6 -: incorrect" in text
    assert "Not measured in this window: 2 predictions (layernorm_forward 2)." in text


def check_steps(text, workloads, other):
    rows = [l for l in text.splitlines() if l.startswith(f"| {workloads} ") or l.startswith(f"| {other} ")]
    assert rows == [
        f"| {workloads} | bf16 | defaults | graph | 15.000 | 12.000 | default-bf16, 3 steps | +25.0% |",
        f"| {workloads} | bf16 | defaults | launched | 11.000 | 22.000 | launched-bf16 (with --op-times), 3 steps | -50.0% |",
        f"| {workloads} | fp32 | defaults | graph | 9.000 | — | not measured in this window | — |",
        f"| {other} | fp32 | defaults | launched | 31.000 | — | not measured in this window "
        f"(default-fp32 trained another model or B, T) | — |"], rows


def check_ranks(report_path):
    """Spearman's ties take their mean rank: ranks 1, 2.5, 2.5, 4 against 1, 3, 2, 4 give
    4.5 / sqrt(4.5 * 5)."""
    spec = importlib.util.spec_from_file_location("report", report_path)
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    assert report.mean_ranks([1.0, 2.0, 2.0, 3.0]) == [1.0, 2.5, 2.5, 4.0]
    assert abs(report.spearman([1, 2, 2, 3], [1, 3, 2, 4]) - 4.5 / (4.5 * 5) ** 0.5) < 1e-12
    assert report.spearman([1, 1], [1, 2]) is None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True, help="tools/device/report.py")
    args = parser.parse_args()
    check_ranks(args.report)
    with tempfile.TemporaryDirectory() as tmp:
        core = os.path.join(tmp, "r")
        make_core(core)
        workloads, other = os.path.join(tmp, "w.json"), os.path.join(tmp, "w8.json")
        write(workloads, json.dumps({"schema": "wb.workloads/1", "B": 4, "T": 64, "model": MODEL, "calls": []}))
        write(other, json.dumps({"schema": "wb.workloads/1", "B": 8, "T": 64, "model": MODEL, "calls": []}))
        pred_path = os.path.join(tmp, "predictions.json")
        make_predictions(pred_path, workloads, other)
        with open(pred_path, "rb") as f:
            before = f.read()
        text = run_report(args.report, core, os.path.join(tmp, "COMPARISON.md"), "--predictions", pred_path)
        with open(pred_path, "rb") as f:
            assert f.read() == before, "report.py changed the predictions file"
        check_scored(text, pred_path)
        check_unscored(text)
        check_steps(text, workloads, other)
        # Without --predictions: the device's results/<slug>/, which holds none here; then a
        # copy of report.py in a tree of its own whose results/<slug>/ holds one.
        text = run_report(args.report, core, os.path.join(tmp, "default.md"))
        assert "None scored: no --predictions given, and results/no-such-device-for-this-test/ holds no predictions*.json." in text
        tree = os.path.join(tmp, "tree")
        with open(args.report) as f:
            write(os.path.join(tree, "tools", "device", "report.py"), f.read())
        write(os.path.join(tree, "results", "no-such-device-for-this-test", "predictions-a.json"), before.decode())
        text = run_report(os.path.join(tree, "tools", "device", "report.py"), core, os.path.join(tmp, "found.md"))
        assert "## Predictions made before this window: results/no-such-device-for-this-test/predictions-a.json\n" in text
        assert "Scores: 7 of 11 predictions matched" in text and "None scored" not in text
        text = run_report(args.report, core, os.path.join(tmp, "bad.md"), "--predictions", os.path.join(tmp, "none.json"))
        assert "(unreadable, or not wb.predictions/1)" in text
    print("test_report_predictions: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
