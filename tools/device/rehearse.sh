#!/usr/bin/env bash
# tools/device/rehearse.sh [BUILD_DIR]: the GPU campaign's core stage rehearsed on this
# machine, without a GPU (a ctest, device_rehearsal): bundle.sh into a temporary folder,
# then core.sh in a clean environment (env -i: no variables of this shell, a PATH of
# /usr/bin and /bin) from that bundle, with REHEARSE=1: checks in emulation, sweeps and
# the trainer on the CPU, a small model. So a missing library, a path that only exists
# here, a misread exit code or too many output files fail here, not in a GPU's minutes.
# Exit 0 when everything came back; 77 (ctest: skipped) when this build has no emulator.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="$(realpath "${1:-build}")"
if ! "$build/wb" device --backend emu >/dev/null 2>&1; then
  echo "rehearsal skipped: this build has no emu backend"
  exit 77
fi
tmp=$(mktemp -d)
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "rehearsal FAILED: $*"
  for f in "$tmp/bundle.log" "$tmp/core.log"; do [[ -f "$f" ]] && { echo "--- $f"; tail -40 "$f"; }; done
  exit 1
}

start=$SECONDS
DEVICE_DIR="$tmp/device" XZ_LEVEL=0 MODEL_ARGS="--init 2,64,2 -b 2 -t 16" bash tools/device/bundle.sh "$build" \
  >"$tmp/bundle.log" 2>&1 || fail "bundle.sh exited $?"
env -i PATH=/usr/bin:/bin HOME="$tmp" OUT="$tmp/out" BUDGET_S=600 RESERVE_S=60 REHEARSE=1 DEVICE_DIR="$tmp/device" \
  WORK="$tmp/work" bash tools/device/core.sh >"$tmp/core.log" 2>&1 || fail "core.sh exited $?"

# What a device call would bring back: at most 8 files of at most 16 MiB each.
files=$(find "$tmp/out" -type f | wc -l)
((files <= 8)) || fail "$files files in OUT (a device call brings back 8)"
big=$(find "$tmp/out" -type f -size +16M)
[[ -z "$big" ]] || fail "files over 16 MiB in OUT: $big"
for f in run.log summary.md results.tgz best.json; do [[ -s "$tmp/out/$f" ]] || fail "no $f in OUT"; done
mkdir "$tmp/back"
tar -C "$tmp/back" -xzf "$tmp/out/results.tgz" || fail "results.tgz does not unpack"
r="$tmp/back/r"
summary=$(cat "$r/summary.md")
# Every part ran and said so.
for op in residual_forward layernorm_forward_bf16; do
  [[ -s "$r/check/$op.json" ]] || fail "no check report of $op"
  grep -qx "check $op rc=0" "$r/check/rc.txt" || fail "check $op: $(grep "check $op" "$r/check/rc.txt")"
done
for run in default-fp32 default-tf32 default-bf16 best-fp32 best-tf32 best-bf16; do
  grep -q "^trainer $run rc=0: summary: 8 steps" <<<"$summary" || fail "trainer $run did not run 8 steps"
done
workloads=$(ls "$tmp/device/workloads" | wc -l)
swept=$(ls "$r/sweep/"*.json 2>/dev/null | wc -l)
((swept == workloads)) || fail "$swept sweep reports of $workloads workloads"
bf16_workloads=$(ls "$tmp/device/workloads-bf16" | wc -l)
bf16_swept=$(ls "$r/sweep-bf16/"*.json 2>/dev/null | wc -l)
((bf16_swept == bf16_workloads)) || fail "$bf16_swept bf16 sweep reports of $bf16_workloads workloads"
grep -q "^best rc=0" <<<"$summary" || fail "wb best failed"
grep -q '"cpu-' "$tmp/out/best.json" || fail "best.json has no section of this CPU"
echo "rehearsal passed in $((SECONDS - start)) s: bundle $(du -h "$tmp/device/bundle.tar.xz" | cut -f1) (xz -0)," \
  "checks of 2 ops in emulation, $swept + $bf16_swept sweeps and 6 trainer runs on the CPU, $files files back"
