#!/usr/bin/env python3
"""tools/device/report.py: the campaign's `report` stage: wb against its anchors (llm.c's
kernels and trainers, PyTorch), from the unpacked outputs of tools/device/core.sh and
tools/device/anchors.sh, into one Markdown file (results/<slug>/COMPARISON.md).

    python3 tools/device/report.py --core DIR --anchors DIR --out results/<slug>/COMPARISON.md

--core: core.sh's results (the folder r/ of results.tgz, or the committed results/<slug>/):
sweep/, sweep-bf16/ (wb.report files), trainer/*.jsonl. --anchors: anchors.sh's folder a/
of anchors.tgz: dev/table.txt, dev/records.jsonl, dev/sweeps.txt, sweep/, train/*.json,
torch/*.json. Either may be missing; whatever is missing is listed as missing, never
filled in. Standard library only.

Kernels: per dev/cuda program, llm.c's fastest (kernel, launch configuration) and wb's
fastest correct record of the op that is the same problem, at the same shape; the ratio
wb / llm.c (below 1: wb is faster). Trainers: ms/step averaged over steps 2.. (the first
step holds one-time costs; PyTorch's over the steps after its --warmup), ratios anchor / wb.
"""
import argparse
import glob
import json
import os
import sys


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def parse_shape(text):
    dims = {}
    for part in text.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            dims[k.strip()] = int(v)
    return dims


def wb_reports(dirs):
    """(path, report) of every wb.report file under the given folders."""
    out = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            r = load_json(path)
            if isinstance(r, dict) and str(r.get("schema", "")).startswith("wb.report/"):
                out.append((path, r))
    return out


def wb_best(reports, op, dims):
    """The fastest correct, timed record of op whose shape holds dims; (record, path) or None.
    CUDA records are preferred; others (the rehearsal's CPU) only where there is no CUDA one."""
    found = []
    for path, r in reports:
        for rec in r.get("records", []):
            if rec.get("op") != op or rec.get("status") != "ok" or not rec.get("timing"):
                continue
            shape = rec.get("shape", {})
            if all(shape.get(k) == v for k, v in dims.items()):
                found.append((rec.get("backend") != "cuda", rec["timing"]["median_us"], rec, path))
    if not found:
        return None
    found.sort(key=lambda x: (x[0], x[1]))
    return found[0][2], found[0][3]


def fmt_ms(ms):
    return "—" if ms is None else (f"{ms:.4f}" if ms < 1 else f"{ms:.3f}" if ms < 100 else f"{ms:.1f}")


def kernels_section(core, anchors, lines, missing):
    lines += ["## Kernels: wb against llm.c's dev/cuda programs", "",
              "Each llm.c program runs its own main() (shape and storage below); wb's figure is the fastest "
              "correct record of the wb op that is the same problem at that shape (`wb sweep`, median with "
              "the L2 flushed; llm.c's programs average repeated launches without a flush, so small kernels favour llm.c). "
              "Ratio = wb / llm.c: below 1, wb is faster.", ""]
    table = os.path.join(anchors, "dev", "table.txt") if anchors else None
    if not table or not os.path.exists(table):
        missing.append("the dev/cuda table and timings (no anchors.sh dev output)")
        lines += ["(no anchors.sh dev output)", ""]
        return
    recs = []
    rec_path = os.path.join(anchors, "dev", "records.jsonl")
    if os.path.exists(rec_path):
        recs = [json.loads(l) for l in open(rec_path) if l.strip()]
    sweeps = {}
    sw_path = os.path.join(anchors, "dev", "sweeps.txt")
    if os.path.exists(sw_path):
        for l in open(sw_path):
            f = l.rstrip("\n").split("|")
            if len(f) == 5:
                sweeps[f[0]] = {"op": f[1], "shape": f[2], "rc": f[3], "command": f[4]}
    reports = wb_reports([os.path.join(anchors, "sweep")] +
                         ([os.path.join(core, "sweep"), os.path.join(core, "sweep-bf16")] if core else []))
    lines += ["| llm.c program | storage | shape | llm.c best: kernel, config | llm.c ms | wb op | wb best | wb ms | wb / llm.c |",
              "| --- | --- | --- | --- | ---: | --- | --- | ---: | ---: |"]
    cmds, notes = [], []
    for row in open(table):
        f = row.rstrip("\n").split("|")
        if len(f) != 6:
            continue
        prog, storage, lshape, op, wshape, why = f
        mine = [r for r in recs if r["program"] == prog]
        best_l = min(mine, key=lambda r: r["ms"]) if mine else None
        if best_l:
            kernels = sorted({r["kernel"] for r in mine})
            cmds.append(f"- llm.c {prog} kernel {best_l['kernel']}: `{best_l['command']}` (kernels run: {', '.join(map(str, kernels))})")
        else:
            missing.append(f"llm.c {prog}: no timing (not built, not run, or refused every kernel: see anchors' log)")
        best_w, ms_w, wtext = None, None, "—"
        if op == "-":
            wtext = "no wb op"
            if why:
                notes.append(f"- {prog}: {why}")
        else:
            sw = sweeps.get(prog)
            dims = parse_shape(sw["shape"] if sw else wshape)
            got = wb_best(reports, op, dims)
            if got:
                best_w, path = got
                ms_w = best_w["timing"]["median_us"] / 1000.0
                params = ",".join(f"{k}={v}" for k, v in sorted(best_w.get("params", {}).items()))
                wtext = f"{best_w.get('backend')}/{best_w.get('variant')} {best_w.get('variant_name')}" + \
                        (f" ({params})" if params else "") + f", {best_w.get('numeric_class')}"
                how = sw["command"] if sw and os.path.basename(path) == f"{prog}.json" else f"core.sh sweep report {os.path.basename(path)}"
                cmds.append(f"- wb {op} at {','.join(f'{k}={v}' for k, v in dims.items())}: `{how}`")
            else:
                missing.append(f"wb {op} at {wshape}: no correct, timed record" +
                               (f" (its sweep exited {sw['rc']})" if sw else " (not swept)"))
            if why:
                notes.append(f"- {prog} / {op}: {why}")
        same = op != "-" and (parse_shape(sweeps[prog]["shape"]) if prog in sweeps else parse_shape(wshape)) == parse_shape(wshape)
        if best_l and ms_w is not None and same:
            ratio = f"{ms_w / best_l['ms']:.2f}"
        elif best_l and ms_w is not None:
            ratio = "shapes differ"
            notes.append(f"- {prog}: wb swept {sweeps[prog]['shape']}, llm.c ran {lshape}: no ratio")
        else:
            ratio = "—"
        ltext = f"{best_l['kernel']}, {best_l['config']}" if best_l else "missing"
        lines.append(f"| {prog} | {storage} | {lshape} | {ltext} | {fmt_ms(best_l['ms'] if best_l else None)} | {op} | {wtext} | {fmt_ms(ms_w)} | {ratio} |")
    lines += ["", "Commands (llm.c's run in the anchors' build folder `run/`):", ""] + cmds + [""]
    if notes:
        lines += ["Notes:", ""] + notes + [""]


def mean_after_first(jsonl):
    ms = []
    for l in open(jsonl):
        try:
            j = json.loads(l)
        except ValueError:
            continue
        # Step 1 warms up; with --cuda-graph the captured step includes the capture.
        if "ms" in j and j.get("step", 0) >= 2 and j.get("graph") != "captured":
            ms.append(j["ms"])
    return (sum(ms) / len(ms), len(ms)) if ms else (None, 0)


def trainers_section(core, anchors, lines, missing):
    lines += ["## Trainers: GPT-2 124M (d12), B=4, T=1024 (the rehearsal: a 2-layer model at small B, T)", "",
              "ms/step averaged over steps 2.. (PyTorch: the steps after its warm-up). "
              "Ratio = the anchor's ms / wb's: below 1, the anchor is faster.", ""]
    wb = {}
    for name in ["default-fp32", "best-fp32", "default-tf32", "best-tf32", "default-bf16", "launched-bf16", "best-bf16"]:
        path = os.path.join(core, "trainer", f"{name}.jsonl") if core else ""
        if path and os.path.exists(path):
            ms, n = mean_after_first(path)
            if ms is not None:
                prec = name.split("-")[1]
                flags = ("" if prec == "fp32" else f" --precision {prec}") + (" --kernels best.json" if name.startswith("best") else "")
                if name.startswith("launched"):  # the default plan, kernel by kernel: the gap the graph closes
                    flags += " --cuda-graph off --op-times"
                wb[name] = (ms, n, f"core.sh train {name}: trainer --backend cuda $MODEL_ARGS --steps 8{flags} (trainer/{name}.log)")
                continue
        missing.append(f"wb trainer {name} (core.sh trainer/{name}.jsonl)")

    def ref(prec):  # wb's fastest run of that precision
        runs = [(v[0], k) for k, v in wb.items() if k.endswith(prec)]
        return min(runs) if runs else None

    rows = []
    for name, (ms, n, cmd) in wb.items():
        rows.append((name.split("-")[1], f"wb {name}", ms, n, cmd))
    for name, prec in [("train_gpt2fp32cu", "tf32"), ("train_gpt2cu", "bf16")]:
        j = load_json(os.path.join(anchors, "train", f"{name}.json")) if anchors else None
        if j and j.get("ms_per_step") is not None:
            rows.append((prec, f"llm.c {name}", j["ms_per_step"], j["steps_timed"], j["command"]))
        else:
            missing.append(f"llm.c {name} (anchors train/{name}.json)")
    for name in ["eager-tf32", "compile-tf32", "eager-bf16", "compile-bf16"]:
        j = load_json(os.path.join(anchors, "torch", f"{name}.json")) if anchors else None
        if j and j.get("ms_per_step") is not None:
            what = f"B={j['B']} T={j['T']} L={j['L']}, torch {j['torch']}, {j['device']}" + (", SDPA" if j.get("sdpa") else "")
            rows.append((name.split("-")[1], f"PyTorch {name} ({what})", j["ms_per_step"], len(j["ms"]) - j["warmup"],
                         "python " + j["command"]))
        else:
            missing.append(f"PyTorch {name} (anchors torch/{name}.json; its log says why)")
    for group, precs in [("fp32 and tf32", ("fp32", "tf32")), ("bf16", ("bf16",))]:
        mine = [r for r in rows if r[0] in precs]
        if not mine:
            continue
        base = ref(precs[-1])
        lines += [f"### {group}" + (f" (ratios against wb {base[1]})" if base else " (no wb run of this precision: no ratios)"), "",
                  "| run | ms/step | steps | ratio | command |", "| --- | ---: | ---: | ---: | --- |"]
        for prec, label, ms, n, cmd in mine:
            ratio = f"{ms / base[0]:.2f}" if base else "—"
            lines.append(f"| {label} | {ms:.2f} | {n} | {ratio} | `{cmd}` |")
        lines.append("")
    lines += ["core.sh's MODEL_ARGS: --init d12 -b 4 -t 1024 unless that run set them (the rehearsal: --init 2,64,2 -b 2 -t 16, on the CPU). "
              "llm.c's fp32 trainer uses tf32 GEMMs on sm_80+ (so it sits with wb's tf32 runs); "
              "its bf16 trainer starts from its own d12 init (it loads bf16 model files only), "
              "the others from the same wb-written model file.", ""]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--core", help="core.sh's unpacked results (r/ or results/<slug>/)")
    ap.add_argument("--anchors", help="anchors.sh's unpacked folder a/")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    core = a.core if a.core and os.path.isdir(a.core) else None
    anchors = a.anchors if a.anchors and os.path.isdir(a.anchors) else None
    lines, missing = [], []
    head = ""
    if anchors and os.path.exists(os.path.join(anchors, "summary.md")):
        head = open(os.path.join(anchors, "summary.md")).readline().lstrip("# ").strip()
    lines += [f"# wb against its anchors{': ' + a.title if a.title else ''}", "",
              f"Written by tools/device/report.py from {'core.sh output ' + a.core if core else 'no core.sh output'} "
              f"and {'anchors.sh output ' + a.anchors if anchors else 'no anchors.sh output'}.",
              f"Anchors run: {head}" if head else "", ""]
    backend_file = os.path.join(anchors, "backend.txt") if anchors else ""
    if backend_file and os.path.exists(backend_file) and open(backend_file).read().strip() != "cuda":
        lines += ["**A rehearsal: no GPU; llm.c's figures come from fake outputs and wb's from the CPU. They mean nothing.**", ""]
    kernels_section(core, anchors, lines, missing)
    trainers_section(core, anchors, lines, missing)
    lines += ["## Missing", ""] + ([f"- {m}" for m in missing] or ["nothing"]) + [""]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {a.out}: {len(missing)} missing pieces")


if __name__ == "__main__":
    sys.exit(main())
