#!/usr/bin/env python3
"""Turns a wb.report report (version 1 or 2) into PNG plots.

    /usr/bin/python3 tools/plot_report.py REPORT --out DIR

writes, into DIR:
  <op>_block_sizes.png   per op with block-size sweeps: median time against block
                         size, one line per variant (variants without a block size
                         as dashed horizontal lines)
  best_of_peak.png       the best variant of every op as a percentage of the roofline
                         (min of memory bandwidth x flops/byte and the GEMM ceiling of
                         its numeric class, as measured by `wb device`); a variant
                         above 100% with a byte model larger than the last-level cache
                         is an inconsistency (a ceiling measured too low), not a
                         result: its bar is drawn hatched at 100% with the figure
                         beside it, and a warning names it
and prints the paths. Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402



def save_atomically(fig, path):
    """Writes the PNG to a temporary file in the same folder and renames it into place,
    so that a crash or a full disk never leaves a broken or empty plot."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        fig.savefig(tmp, dpi=110, format="png")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)

def above_ceiling(r, llc_bytes):
    """The report's flag where it has one (wb.report/2 from issue 27 on); else the same
    rule as wb's (ceilings.h): above 100% of the roofline while moving more bytes than
    the last-level cache holds, so that older reports are judged alike."""
    t = r.get("throughput") or {}
    if "above_ceiling" in t:
        return bool(t["above_ceiling"])
    return llc_bytes > 0 and r["model"]["bytes"] > llc_bytes and t.get("pct_of_roofline", 0.0) > 100


def timed(records):
    return [r for r in records if r["status"] == "ok" and r.get("timing")]


def shape_text(r):
    return " ".join(f"{k}={v}" for k, v in r["shape"].items())


def label(r):
    return f'{r["backend"]}/{r["variant"]} {r["variant_name"]}'


def plot_block_sizes(op, records, device, out_dir):
    by_variant = defaultdict(list)
    for r in records:
        by_variant[label(r)].append(r)
    if not any("block_size" in r["params"] for r in records):
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, rs in sorted(by_variant.items(), key=lambda kv: kv[1][0]["variant"]):
        sized = sorted((r["params"]["block_size"], r["timing"]["median_us"]) for r in rs if "block_size" in r["params"])
        if sized:
            ax.plot([s for s, _ in sized], [t for _, t in sized], marker="o", label=name)
        else:
            ax.axhline(min(r["timing"]["median_us"] for r in rs), linestyle="--", linewidth=1, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("block size")
    ax.set_ylabel("median time per launch (us)")
    ax.set_title(f"{op} at {shape_text(records[0])}\n{device}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, f"{op}_block_sizes.png")
    save_atomically(fig, path)
    plt.close(fig)
    return path


def plot_best(records, device, out_dir, llc_bytes=0):
    best = {}
    for r in records:
        if r["op"] not in best or r["timing"]["median_us"] < best[r["op"]]["timing"]["median_us"]:
            best[r["op"]] = r
    if not best:
        return None
    ops = list(best)
    pct = [best[o]["throughput"].get("pct_of_roofline", 0.0) for o in ops]
    flagged = [above_ceiling(best[o], llc_bytes) for o in ops]
    for o, p, f in zip(ops, pct, flagged):
        if f:
            print(f"plot_report: WARNING: {o} {label(best[o])} at {shape_text(best[o])}: {p:.0f}% of the roofline "
                  f"with {best[o]['model']['bytes'] * 1e-6:.1f} MB moved, more than the last-level cache "
                  f"({llc_bytes * 1e-6:.1f} MB): above the ceiling, drawn hatched at 100%", file=sys.stderr)
    # A flagged bar stops at 100%: its length would only measure how wrong the ceiling is.
    shown = [min(p, 100.0) if f else p for p, f in zip(pct, flagged)]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(ops) + 1.5))
    bars = ax.barh(range(len(ops)), shown, color=["#bbbbbb" if f else "#4477aa" for f in flagged])
    for bar, f in zip(bars, flagged):
        if f:
            bar.set_hatch("//")
    ax.set_yticks(range(len(ops)))
    ax.set_yticklabels(ops, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(100, max(shown) * 1.1) + 30 * any(flagged))
    ax.axvline(100, color="#aa3377", linestyle="--", linewidth=1)
    ax.set_xlabel("% of the roofline (memory bandwidth x flops/byte, or GEMM peak)")
    if any(flagged):
        fig.text(0.01, 0.03, "hatched: above the ceiling beyond the last-level cache (the ceiling is too low); "
                 "the measured % is written beside the bar", fontsize=7)
    if any(p > 100 and not f for p, f in zip(pct, flagged)):
        # Above the ceiling: the working set stayed in a cache between launches (the CPU
        # backend times warm; CUDA flushes its L2 before every launch).
        fig.text(0.01, 0.005, "over 100%: the working set stayed in cache between launches", fontsize=7)
    ax.set_title(f"best variant per op\n{device}", fontsize=10)
    for bar, o, p, f in zip(bars, ops, pct, flagged):
        text = f"{label(best[o])}  [{p:.0f}%: above the ceiling]" if f else label(best[o])
        ax.text(bar.get_width() + 1, bar.get_y() + bar.get_height() / 2, text, va="center", fontsize=7)
    fig.tight_layout()
    path = os.path.join(out_dir, "best_of_peak.png")
    save_atomically(fig, path)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report")
    parser.add_argument("--out", required=True, help="folder for the PNG files")
    args = parser.parse_args()
    try:
        with open(args.report) as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"plot_report: cannot read {args.report}: {e}", file=sys.stderr)
        return 2
    if report.get("schema") not in ("wb.report/1", "wb.report/2"):
        print(f"plot_report: {args.report} is not a wb.report report (wb.report/1 or /2)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    ctx = report["context"]
    device = f'{ctx["device"]["name"]} ({ctx["device"]["backend"]}), {ctx["created"][:10]}'
    records = timed(report["records"])
    by_op = defaultdict(list)
    for r in records:
        by_op[r["op"]].append(r)
    paths = [plot_block_sizes(op, rs, device, args.out) for op, rs in by_op.items()]
    paths.append(plot_best(records, device, args.out, ctx["device"].get("l2_bytes", 0)))
    for p in paths:
        if p:
            print(p)
    if not any(paths):
        print("plot_report: no timed records to plot", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
