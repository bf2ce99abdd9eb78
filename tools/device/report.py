#!/usr/bin/env python3
"""tools/device/report.py: the campaign's `report` stage: wb against its anchors (llm.c's
kernels and trainers, PyTorch), from the unpacked outputs of tools/device/core.sh and
tools/device/anchors.sh, into one Markdown file (results/<slug>/COMPARISON.md).

    python3 tools/device/report.py --core DIR --anchors DIR --out results/<slug>/COMPARISON.md \
        [--predictions results/<slug>/predictions.json ...]

--core: core.sh's results (the folder r/ of results.tgz, or the committed results/<slug>/):
sweep/, sweep-bf16/ (wb.report files), trainer/*.jsonl. --anchors: anchors.sh's folder a/
of anchors.tgz: dev/table.txt, dev/records.jsonl, dev/sweeps.txt, sweep/, train/*.json,
torch/*.json. Either may be missing; whatever is missing is listed as missing, never
filled in. Standard library only.

Kernels: per dev/cuda program, llm.c's fastest (kernel, launch configuration) and wb's
fastest correct record of the op that is the same problem, at the same shape; the ratio
wb / llm.c (below 1: wb is faster). Trainers: ms/step averaged over steps 2.. (the first
step holds one-time costs; PyTorch's over the steps after its --warmup), ratios anchor / wb.
Predictions (wb.predictions/1, docs/formats.md; by default every predictions*.json of
results/<slug>/ for the core folder's device): each against this window's measurement of the
same configuration, as the file has it: nothing is refitted, so the window is a blind test.
"""
import argparse
import glob
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


# Predictions made before the window (wb.predictions/1). Nothing below fits a constant: each
# predicted time is held against the measured one as both stand, so the scores say how the
# model that wrote the file does on figures it never saw.

def device_slug(core):
    """The slug of the core folder's device: device.txt (`wb device`), else summary.md."""
    for name, pattern in [("device.txt", r"slug ([a-z0-9][a-z0-9-]*)\)"), ("summary.md", r"device slug: ([a-z0-9][a-z0-9-]*)")]:
        path = os.path.join(core, name)
        m = re.search(pattern, open(path).read()) if os.path.exists(path) else None
        if m and m.group(1) != "unknown-device":
            return m.group(1)
    return None


def canon(d):  # shapes and params compare as dicts: any key order
    return json.dumps(d or {}, sort_keys=True)


def identity(x):
    """What a prediction and a record share when one measures the other, the hash aside."""
    return (x.get("op"), x.get("backend"), x.get("variant"), canon(x.get("shape")), canon(x.get("params")))


def fmt_params(p):
    return ",".join(f"{k}={v}" for k, v in sorted((p or {}).items())) or "-"


def fmt_shape(s):
    return ",".join(f"{k}={v}" for k, v in (s or {}).items())


def classify(preds, reports):
    """Each prediction as matched (same identity and source_hash, ok and timed), failed (same,
    but not ok), changed (measured with another source_hash: the code moved since) or
    unmeasured."""
    index = {}
    for _, r in reports:
        for rec in r.get("records", []):
            index.setdefault(identity(rec), []).append(rec)
    out = {"matched": [], "failed": [], "changed": [], "unmeasured": []}
    for p in preds:
        cands = index.get(identity(p), [])
        same = [r for r in cands if r.get("source_hash") == p.get("source_hash")]
        timed = [r for r in same if r.get("status") == "ok" and r.get("timing")]
        if timed:
            out["matched"].append((p, timed[0]["timing"]["median_us"] * 1e-6))
        elif same:
            out["failed"].append((p, same[0]))
        elif cands:
            out["changed"].append((p, cands[0]))
        else:
            out["unmeasured"].append(p)
    return out


def rel_error(predicted, measured):
    return (predicted - measured) / measured


def mean_ranks(xs):
    """1-based ranks, tied values sharing the mean of their ranks."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs, ys):
    """Spearman's rank correlation (Pearson's over mean ranks); None where a side has no spread."""
    if len(xs) < 2:
        return None
    rx, ry = mean_ranks(xs), mean_ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx, syy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else None


def pick_scores(pairs):
    """pairs: (predicted s, measured s) of one (op, shape), in the file's order. The predicted
    fastest (the first of a tie), whether it measured within 5% of the measured fastest, and
    whether the measured fastest is among the three predicted fastest."""
    by_pred = sorted(range(len(pairs)), key=lambda i: pairs[i][0])  # stable: ties keep the file's order
    best = min(m for _, m in pairs)
    fastest = {i for i, (_, m) in enumerate(pairs) if m == best}
    return by_pred[0], pairs[by_pred[0]][1] <= 1.05 * best, bool(fastest & set(by_pred[:3]))


def fmt_rho(rho):
    return "—" if rho is None else f"{rho:.2f}"


def scores_lines(matched, total):
    errs = [abs(rel_error(p["seconds"], m)) for p, m in matched]
    if not errs:
        return [f"Scores: 0 of {total} predictions measured in this window: nothing to score.", ""]
    n = len(errs)
    within = lambda t: sum(e <= t for e in errs)
    rho = spearman([p["seconds"] for p, _ in matched], [m for _, m in matched])
    return [f"Scores: {n} of {total} predictions matched by a measurement; MAPE {100 * sum(errs) / n:.1f}%; "
            f"within 15%: {within(0.15)} of {n} ({100 * within(0.15) / n:.0f}%); "
            f"within 25%: {within(0.25)} of {n} ({100 * within(0.25) / n:.0f}%); "
            f"Spearman over every matched configuration: {fmt_rho(rho)}.", ""]


def matched_lines(matched):
    lines = ["| op | shape | backend/variant | launch | predicted µs | measured µs | error | held |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | --- |"]
    for p, m in matched:
        e = rel_error(p["seconds"], m)
        held = "within 15%" if abs(e) <= 0.15 else "within 25%" if abs(e) <= 0.25 else "no"
        lines.append(f"| {p['op']} | {fmt_shape(p.get('shape'))} | {p.get('backend')}/{p.get('variant')} "
                     f"{p.get('variant_name', '')} | {fmt_params(p.get('params'))} | {p['seconds'] * 1e6:.2f} | "
                     f"{m * 1e6:.2f} | {100 * e:+.1f}% | {held} |")
    return lines + [""]


def group_lines(matched):
    groups = {}
    for p, m in matched:
        groups.setdefault((p["op"], p.get("backend"), canon(p.get("shape"))), []).append((p, m))
    lines = ["Per (op, shape) with two or more matched configurations:", "",
             "| op | shape | configurations | Spearman | predicted fastest | its measured µs | measured fastest µs "
             "| pick within 5% | measured fastest in predicted top 3 |",
             "| --- | --- | ---: | ---: | --- | ---: | ---: | --- | --- |"]
    rows = 0
    for (op, _, _), members in groups.items():
        if len(members) < 2:
            continue
        pairs = [(p["seconds"], m) for p, m in members]
        i, pick_ok, top3 = pick_scores(pairs)
        pick, pick_m = members[i]
        rows += 1
        lines.append(f"| {op} | {fmt_shape(pick.get('shape'))} | {len(members)} | "
                     f"{fmt_rho(spearman(*zip(*pairs)))} | {pick.get('variant')} {fmt_params(pick.get('params'))} | "
                     f"{pick_m * 1e6:.2f} | {min(m for _, m in pairs) * 1e6:.2f} | {'yes' if pick_ok else 'no'} | "
                     f"{'yes' if top3 else 'no'} |")
    return (lines if rows else ["No (op, shape) has two matched configurations: no ranking to score."]) + [""]


def trainer_runs(core):
    """core.sh's trainer runs without --kernels (default-*, launched-*; best-* use best.json):
    precision, launch (graph when the log's steps say so), ms/step over steps 2.., the log's
    first line."""
    runs = []
    for path in sorted(glob.glob(os.path.join(core, "trainer", "*.jsonl"))):
        name = os.path.basename(path)[:-len(".jsonl")]
        kind, _, precision = name.partition("-")
        if kind not in ("default", "launched"):
            continue
        steps = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
        ms, n = mean_after_first(path)
        log = os.path.join(core, "trainer", name + ".log")
        # core.sh runs launched-* with --op-times: on cuda CUDA events around each call, not
        # quite the plain step (the log's op_ms cannot tell: cpu and emu always write it).
        runs.append({"name": name, "precision": precision, "ms": ms, "n": n,
                     "launch": "graph" if any("graph" in s for s in steps) else "launched",
                     "op_times": kind == "launched",
                     "header": open(log).readline() if os.path.exists(log) else ""})
    return runs


def same_model(step, run):
    """Whether the run trained the step's model at its B and T (its log's first line against
    the workloads file); None where either cannot be read."""
    path = step.get("workloads", "")
    w = load_json(path if os.path.isabs(path) else os.path.join(REPO, path))
    if not isinstance(w, dict) or not run["header"]:
        return None
    return f"GPT-2 {w.get('model')} (" in run["header"] and f", B={w.get('B')} T={w.get('T')}," in run["header"]


def step_lines(steps, core):
    runs = trainer_runs(core) if core else []
    lines = ["Steps (the trainer's mean ms/step over steps 2.., same storage, no --kernels, same launch):", "",
             "| workloads | storage | selection | launch | predicted ms | measured ms/step | run | error |",
             "| --- | --- | --- | --- | ---: | ---: | --- | ---: |"]
    for s in steps:
        # The storage names the run: default-fp32 holds fp32, default-bf16 bf16 (tf32 computes
        # differently on fp32 storage: no step of the format is a tf32 one).
        cands = [r for r in runs if r["precision"] == s.get("storage") and r["launch"] == s.get("launch")
                 and r["ms"] is not None and s.get("selection", "defaults") == "defaults"]
        cands.sort(key=lambda r: r["op_times"])  # a plain run before one with --op-times
        head = f"| {s.get('workloads')} | {s.get('storage')} | {s.get('selection')} | {s.get('launch')} | {s['ms']:.3f} |"
        run = cands[0] if cands else None
        model = same_model(s, run) if run else None
        if not run:
            lines.append(f"{head} — | not measured in this window | — |")
        elif model is False:
            lines.append(f"{head} — | not measured in this window ({run['name']} trained another model or B, T) | — |")
        else:
            note = (" (with --op-times)" if run["op_times"] else "") + (" (model not checked)" if model is None else "")
            lines.append(f"{head} {run['ms']:.3f} | {run['name']}{note}, {run['n']} steps | "
                         f"{100 * rel_error(s['ms'], run['ms']):+.1f}% |")
    return lines + [""]


def unscored_lines(got):
    lines = []
    if got["changed"]:
        lines += ["Code changed since predicted (measured with another source_hash; never scored):", ""]
        lines += [f"- {p['op']} {fmt_shape(p.get('shape'))} {p.get('backend')}/{p.get('variant')} "
                  f"{fmt_params(p.get('params'))}: predicted for {str(p.get('source_hash'))[:12]}, "
                  f"measured {str(r.get('source_hash'))[:12]}" for p, r in got["changed"]] + [""]
    if got["failed"]:
        lines += ["Measured without a time (not scored):", ""]
        lines += [f"- {p['op']} {fmt_shape(p.get('shape'))} {p.get('backend')}/{p.get('variant')} "
                  f"{fmt_params(p.get('params'))}: {r.get('status')} {r.get('reason', '')}".rstrip() for p, r in got["failed"]] + [""]
    per_op = {}
    for p in got["unmeasured"]:
        per_op[p["op"]] = per_op.get(p["op"], 0) + 1
    lines.append(f"Not measured in this window: {len(got['unmeasured'])} predictions" +
                 (" (" + ", ".join(f"{op} {n}" for op, n in sorted(per_op.items())) + ")." if per_op else "."))
    return lines + [""]


def predictions_section(path, core, lines, missing):
    shown = os.path.relpath(path, REPO) if os.path.abspath(path).startswith(REPO + os.sep) else path
    lines += [f"## Predictions made before this window: {shown}", ""]
    doc = load_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != "wb.predictions/1":
        missing.append(f"the predictions of {shown} (unreadable, or not wb.predictions/1)")
        lines += ["(unreadable, or not wb.predictions/1)", ""]
        return
    made = doc.get("made", {})
    preds = [p for p in doc.get("predictions", []) if isinstance(p.get("seconds"), (int, float))]
    lines += [f"`{shown}`: made at commit {made.get('commit')} by model {made.get('model')} on {made.get('date')}, "
              f"for {doc.get('device', {}).get('name')}. Scored without refit: each predicted time against this "
              "window's median of the record with the same op, shape, backend, variant, launch parameters and "
              "source_hash; error = (predicted - measured) / measured.", ""]
    got = classify(preds, wb_reports([os.path.join(core, "sweep"), os.path.join(core, "sweep-bf16")]) if core else [])
    lines += scores_lines(got["matched"], len(preds))
    if got["matched"]:
        lines += matched_lines(got["matched"]) + group_lines(got["matched"])
    lines += step_lines(doc.get("steps", []), core) if doc.get("steps") else []
    lines += unscored_lines(got)


def prediction_files(explicit, core):
    """The files to score: --predictions, else results/<slug>/predictions*.json for the core
    folder's device; (files, why there are none)."""
    if explicit:
        return explicit, ""
    slug = device_slug(core) if core else None
    if not slug:
        return [], "no --predictions given, and no core folder that names its device"
    found = sorted(glob.glob(os.path.join(REPO, "results", slug, "predictions*.json")))
    return found, "" if found else f"no --predictions given, and results/{slug}/ holds no predictions*.json"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--core", help="core.sh's unpacked results (r/ or results/<slug>/)")
    ap.add_argument("--anchors", help="anchors.sh's unpacked folder a/")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("--predictions", action="append", default=[],
                    help="a wb.predictions/1 file to score (repeatable; default: results/<slug>/predictions*.json)")
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
    files, why = prediction_files(a.predictions, core)
    for path in files:
        predictions_section(path, core, lines, missing)
    if why:
        lines += ["## Predictions made before this window", "", f"None scored: {why}.", ""]
    lines += ["## Missing", ""] + ([f"- {m}" for m in missing] or ["nothing"]) + [""]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {a.out}: {len(missing)} missing pieces")


if __name__ == "__main__":
    sys.exit(main())
