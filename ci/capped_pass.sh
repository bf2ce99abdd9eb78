#!/usr/bin/env bash
# CI's capped pass: the paths of a CPU without AVX-512, proven on whatever CPU CI has.
# Under tools/capped.sh (wb, oneDNN and OpenBLAS capped at AVX2) it runs the README's
# main job at small sizes -- the CPU's description and ceilings, a CPU sweep of
# layernorm_forward, the trainer in fp32 and in bf16 for a few steps of a small model
# with the committed best.json -- then every CPU variant's check on the tiny and odd
# shapes, and the bf16 trainer's tests. On a CPU without AVX-512 the whole ctest
# already runs this way; this pass makes an AVX-512 machine prove it too.
#
#   bash ci/capped_pass.sh [BUILD_DIR]     (default: ${WB_BUILD_DIR:-build})
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${WB_BUILD_DIR:-build}}
[[ -x $build/wb && -x $build/trainer ]] || { echo "capped_pass: no $build/wb: run bash tools/build.sh" >&2; exit 2; }
capped=(bash tools/capped.sh --isa avx2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { echo "capped_pass: $*"; }

step "the CPU as capped, and its ceilings"
"${capped[@]}" "$build/wb" device --backend cpu | tee "$work/device.txt"
grep -q "level avx2, capped by WB_CPU_ISA=avx2" "$work/device.txt"
slug=$("${capped[@]}" "$build/wb" device --backend cpu --slug)
[[ $slug == *-avx2 ]] || { echo "capped_pass: the capped slug is $slug, not *-avx2" >&2; exit 1; }

step "a CPU sweep of layernorm_forward"
"${capped[@]}" "$build/wb" sweep layernorm_forward --backend cpu --shape B=2,T=64,C=256 --repetitions 2 \
  --min-time 0.01 --out "$work/{device}/layernorm_forward.json"
/usr/bin/python3 - "$work/$slug/layernorm_forward.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = r["context"]["device"]
assert d["isa"] == "avx2" and d["cpu"]["cap"] == "avx2", d
assert not d["cpu"]["onednn_bf16_matmul"], d["cpu"]
assert "bf16_tflops" in r["context"]["ceilings"]["absent"], r["context"]["ceilings"]
bad = [x for x in r["records"] if x["status"] not in ("ok", "skipped")]
assert not bad, bad
print(f"capped_pass: {len(r['records'])} records, none failed; bf16 ceiling absent: "
      f"{r['context']['ceilings']['absent']['bf16_tflops'][:60]}...")
PY

step "the trainer, fp32 and bf16, on the committed best.json"
"$build/prepare_data" tinyshakespeare --out "$work/data" >/dev/null  # the data looked up, or downloaded
for precision in fp32 bf16; do
  "${capped[@]}" "$build/trainer" --backend cpu --kernels=results/best.json --precision "$precision" \
    --init 2,64,2 -b 2 -t 32 --steps 3 --lr 1e-3 --train "$work/data/tiny_shakespeare_train.bin" \
    | tee "$work/trainer_$precision.txt"
  grep -qE "^step +3/3" "$work/trainer_$precision.txt" ||
    { echo "capped_pass: the $precision trainer did not reach step 3" >&2; exit 1; }
done

# The PyTorch rungs apart: PyTorch's kernels are not wb's paths, and check_torch_cpu
# checks them.
step "every CPU variant's check, tiny and odd shapes"
"${capped[@]}" "$build/wb" check --all --backend cpu --shapes tiny,odd --variants no-torch --json "$work/check.json" >"$work/check.txt" ||
  { cat "$work/check.txt"; exit 1; }
tail -3 "$work/check.txt"

step "the bf16 trainer's tests and the CPU trainer against PyTorch"
"${capped[@]}" ctest --test-dir "$build" --output-on-failure -j "$(nproc)" \
  -R '^(Bf16\.|Command\.Bf16|Resume\..*[Bb]f16|trainer_parity\.cpu_|CpuLadders\.|committed_best_json)'
