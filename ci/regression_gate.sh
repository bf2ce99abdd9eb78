#!/usr/bin/env bash
# Timing regression gate for CI runners that have a GPU (or, with --backend cpu, any).
#
#   ci/regression_gate.sh [--backend cuda|cpu] [--shape S] [--max-slowdown P] [--record]
#                            [--baseline-dir DIR] [--out-dir DIR] [--no-build] [OP ...]
#
# Builds wb, sweeps the ops given (default: every op) at the shape (default llmc-dev),
# and compares each report with the baseline results/<device-slug>/baseline/<op>.json
# through `wb compare`. Prints a markdown table per op (ready for a CI job summary) and
# exits with the worst code of the sweeps and comparisons: 0 pass, 1 a regression
# (slower beyond the noise and the allowed slowdown, or correct before and incorrect
# now) or a sweep that found an incorrect variant, 2 bad input (e.g. a baseline from
# another device) or a sweep that failed, 3 no usable device. A sweep that fails writes
# no report and is never compared (nor recorded): its op fails the gate with the
# sweep's code. An op without a baseline is reported and passed over. --record writes
# the sweeps as the new baselines instead of comparing.
# --baseline-dir and --out-dir replace results/<slug>/baseline and out/gate/<slug>;
# --no-build uses the wb already built in ${WB_BUILD_DIR:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."

backend="" shape="llmc-dev" max_slowdown="5%" record=0 build=1 baseline_dir="" out_dir="" ops=()
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --max-slowdown) max_slowdown="$2"; shift 2 ;;
    --record) record=1; shift ;;
    --baseline-dir) baseline_dir="$2"; shift 2 ;;
    --out-dir) out_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "regression_gate: unknown option $1" >&2; exit 2 ;;
    *) ops+=("$1"); shift ;;
  esac
done

[ "$build" -eq 1 ] && bash tools/build.sh >/dev/null
wb="${WB_BUILD_DIR:-build}/wb"
backend_args=()
[ -n "$backend" ] && backend_args=(--backend "$backend")
slug=$("$wb" device --slug "${backend_args[@]}")
if [ ${#ops[@]} -eq 0 ]; then
  mapfile -t ops < <("$wb" list | awk '/^[a-z0-9_]+  \[/ {print $1}')
fi

[ -n "$baseline_dir" ] || baseline_dir="results/$slug/baseline"
[ -n "$out_dir" ] || out_dir="out/gate/$slug"
mkdir -p "$out_dir"
worst=0
for op in "${ops[@]}"; do
  report="$out_dir/$op.json"
  # A report left by an earlier run must never stand in for this one.
  rm -f "$report"
  swept=0
  "$wb" sweep "$op" "${backend_args[@]}" --shape "$shape" --out "$report" ${WB_GATE_SWEEP_ARGS:-} >/dev/null || swept=$?
  [ "$swept" -gt "$worst" ] && worst=$swept
  if [ "$swept" -ne 0 ] && { [ "$swept" -ne 1 ] || [ ! -f "$report" ]; }; then
    echo "### $op"
    echo "the sweep failed (exit $swept): nothing to $([ "$record" -eq 1 ] && echo record || echo compare)"
    continue
  fi
  if [ "$record" -eq 1 ]; then
    mkdir -p "$baseline_dir"
    cp "$report" "$baseline_dir/$op.json"
    echo "recorded $baseline_dir/$op.json"
    continue
  fi
  echo "### $op"
  if [ ! -f "$baseline_dir/$op.json" ]; then
    echo "no baseline ($baseline_dir/$op.json): passed over; record one with --record"
    continue
  fi
  code=0
  "$wb" compare "$baseline_dir/$op.json" "$report" --max-slowdown "$max_slowdown" --format markdown || code=$?
  [ "$code" -gt "$worst" ] && worst=$code
done
exit "$worst"
