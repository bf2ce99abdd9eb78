#!/usr/bin/env bash
# tools/device/gpu_ci.sh: the GPU CI job in one script (.github/workflows/gpu.yml runs it
# on a self-hosted runner labelled `gpu`; tools/device/rehearse.sh runs it here without a
# GPU, emu and cpu backends at a tiny shape, so that the workflow's script is tested).
#
#   tools/device/gpu_ci.sh [--backend B] [--check-backend B] [--gate-backend B] [--shape S]
#                          [--max-slowdown P] [--baseline-dir DIR] [--out-dir DIR]
#                          [--summary FILE] [--no-build] [OP ...]
#
# 1. builds wb (tools/build.sh; --no-build: the wb in ${WB_BUILD_DIR:-build});
# 2. `wb check` of every op (or the OPs given) on the check backend (default cuda);
# 3. the regression gate (ci/regression_gate.sh) on the gate backend (default cuda) at
#    the shape (default llmc-dev) against results/<device-slug>/baseline/ (--baseline-dir);
# 4. writes a markdown summary -- the check's verdict and the gate's tables -- to FILE
#    (default: $GITHUB_STEP_SUMMARY where it is set, else OUT_DIR/summary.md).
# No baseline for this device (the first run on a new card): nothing can regress, so the
# gate runs with --record into OUT_DIR/baseline/ instead and the summary says so; those
# reports become the baseline once someone reviews and commits them as
# results/<slug>/baseline/ (CI never commits). --backend sets both backends.
# Exit: the worst of the check's and the gate's codes (0 pass, 1 a failed check or a
# regression, 2 bad input, 3 no usable device); 2 on a bad option.
set -euo pipefail
cd "$(dirname "$0")/../.."

check_backend=cuda gate_backend=cuda shape=llmc-dev max_slowdown=5% baseline_dir="" out_dir="" summary="" build=1 ops=()
usage() { sed -n '2,23p' "$0"; }
need() { [[ $# -ge 2 && -n "$2" ]] || { echo "gpu_ci: $1 needs a value" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --backend) need "$@"; check_backend="$2" gate_backend="$2"; shift 2 ;;
    --check-backend) need "$@"; check_backend="$2"; shift 2 ;;
    --gate-backend) need "$@"; gate_backend="$2"; shift 2 ;;
    --shape) need "$@"; shape="$2"; shift 2 ;;
    --max-slowdown) need "$@"; max_slowdown="$2"; shift 2 ;;
    --baseline-dir) need "$@"; baseline_dir="$2"; shift 2 ;;
    --out-dir) need "$@"; out_dir="$2"; shift 2 ;;
    --summary) need "$@"; summary="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "gpu_ci: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    *) ops+=("$1"); shift ;;
  esac
done
for b in "$check_backend" "$gate_backend"; do
  [[ "$b" =~ ^(cuda|cpu|emu)$ ]] || { echo "gpu_ci: unknown backend '$b' (cuda, cpu or emu)" >&2; exit 2; }
done
[[ "$gate_backend" != emu ]] || { echo "gpu_ci: the gate times its sweeps; emu is never timed (--gate-backend cpu or cuda)" >&2; exit 2; }

if [[ "$build" == 1 ]]; then
  echo "gpu_ci: building (tools/build.sh)"
  bash tools/build.sh >/dev/null
fi
build_dir="${WB_BUILD_DIR:-build}"
wb="$build_dir/wb"
[[ -x "$wb" ]] || { echo "gpu_ci: no wb in $build_dir (build first, or set WB_BUILD_DIR)" >&2; exit 2; }
# The device's slug names the baseline; a backend without a usable device stops here (3).
slug=$("$wb" device --slug --backend "$gate_backend") || {
  rc=$?
  echo "gpu_ci: no usable $gate_backend device (wb device exited $rc)" >&2
  exit "$rc"
}
[[ -n "$baseline_dir" ]] || baseline_dir="results/$slug/baseline"
[[ -n "$out_dir" ]] || out_dir="out/gpu-ci/$slug"
mkdir -p "$out_dir"
[[ -n "$summary" ]] || summary="${GITHUB_STEP_SUMMARY:-$out_dir/summary.md}"
# Written beside its target and renamed into place at the end (GitHub's summary file is
# appended to, as its other steps may have written to it).
body=$(mktemp "$out_dir/summary.XXXXXX")
trap 'rm -f "$body"' EXIT

worst=0
{
  echo "## wb on $slug"
  echo
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); check on $check_backend, gate on $gate_backend at $shape"
  echo
} >>"$body"

check_args=(--backend "$check_backend" --variants no-torch)  # PyTorch's rungs: docs/torch.md
if [[ ${#ops[@]} -eq 0 ]]; then check_args+=(--all); fi
check_rc=0
if [[ ${#ops[@]} -eq 0 ]]; then
  "$wb" check "${check_args[@]}" >"$out_dir/check.log" 2>&1 || check_rc=$?
else
  for op in "${ops[@]}"; do
    "$wb" check "$op" "${check_args[@]}" >>"$out_dir/check.log" 2>&1 || { rc=$?; ((rc > check_rc)) && check_rc=$rc; }
  done
fi
((check_rc > worst)) && worst=$check_rc
echo "gpu_ci: wb check on $check_backend exited $check_rc ($out_dir/check.log)"
{
  echo "### wb check ($check_backend): $([[ $check_rc == 0 ]] && echo passed || echo "FAILED, exit $check_rc")"
  echo
  if [[ $check_rc != 0 ]]; then
    echo '```'
    tail -30 "$out_dir/check.log"
    echo '```'
    echo
  fi
} >>"$body"

gate_args=(--no-build --backend "$gate_backend" --shape "$shape" --max-slowdown "$max_slowdown" --out-dir "$out_dir/gate")
gate_rc=0
if [[ -d "$baseline_dir" ]] && compgen -G "$baseline_dir/*.json" >/dev/null; then
  WB_BUILD_DIR="$build_dir" bash ci/regression_gate.sh "${gate_args[@]}" --baseline-dir "$baseline_dir" \
    ${ops[@]+"${ops[@]}"} >"$out_dir/gate.md" 2>"$out_dir/gate.log" || gate_rc=$?
  echo "### regression gate against $baseline_dir: $([[ $gate_rc == 0 ]] && echo passed || echo "FAILED, exit $gate_rc")" >>"$body"
else
  WB_BUILD_DIR="$build_dir" bash ci/regression_gate.sh "${gate_args[@]}" --record --baseline-dir "$out_dir/baseline" \
    ${ops[@]+"${ops[@]}"} >"$out_dir/gate.md" 2>"$out_dir/gate.log" || gate_rc=$?
  {
    echo "### regression gate: no baseline for $slug ($baseline_dir): recorded one, nothing compared"
    echo
    echo "The sweeps of this run are in $out_dir/baseline/; reviewed and committed as $baseline_dir/, they are"
    echo "the baseline of the next runs."
  } >>"$body"
fi
((gate_rc > worst)) && worst=$gate_rc
echo "gpu_ci: regression gate on $gate_backend exited $gate_rc ($out_dir/gate.md)"
{
  echo
  cat "$out_dir/gate.md"
  echo
  echo "exit $worst"
} >>"$body"

if [[ -n "${GITHUB_STEP_SUMMARY:-}" && "$summary" == "$GITHUB_STEP_SUMMARY" ]]; then
  cat "$body" >>"$summary"
else
  mkdir -p "$(dirname "$summary")"
  tmp="$summary.tmp-$$"
  cp "$body" "$tmp" && mv -f "$tmp" "$summary"
fi
echo "gpu_ci: summary in $summary; exit $worst"
exit "$worst"
