#!/usr/bin/env bash
# tools/device/rehearse.sh [BUILD_DIR]: the GPU campaign's core stage rehearsed on this
# machine, without a GPU (a ctest, device_rehearsal): bundle.sh into a temporary folder,
# then core.sh in a clean environment (env -i: no variables of this shell, a PATH of
# /usr/bin and /bin) from that bundle, with REHEARSE=1: checks in emulation, sweeps and
# the trainer on the CPU, a small model. So a missing library, a path that only exists
# here, a misread exit code or too many output files fail here, not in a GPU's minutes.
# Then the anchors stage (tools/device/anchors.sh, REHEARSE=1, same env -i): the model file
# and PyTorch on the CPU (2 layers, 2 steps), llm.c's trainers and dev/cuda kernels from the
# fake outputs of tools/device/fixtures/ through the same parsers, wb's sweeps of those ops at
# small shapes; and the report stage (tools/device/report.py) writing a COMPARISON.md from
# both, scoring tools/device/fixtures/predictions.json against the core stage's records
# (into the temporary folder; results/ is never touched). REHEARSE_NVCC=1 also compiles
# one dev/cuda program with nvcc (sm_90) from the bundled llm.c source: the build line
# (REHEARSE_NVCC_TRAINERS=1 with it: llm.c's two trainers too). Last the sanitize stage
# (tools/device/sanitize.sh, REHEARSE=1): a stand-in for compute-sanitizer
# (tools/device/fixtures/fake-compute-sanitizer) around wb check in emulation, its
# invented report parsed into the stage's table. The core stage's CPU sweeps are checked for
# trustworthy ceilings (streams on warm buffers larger than the last-level cache, nothing
# above the roofline beyond it). Last the GPU CI job's script (tools/device/gpu_ci.sh,
# what .github/workflows/gpu.yml runs) with the emu and cpu backends at a tiny shape.
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
  for f in "$tmp/bundle.log" "$tmp/core.log" "$tmp/anchors.log" "$tmp/report.log" "$tmp/COMPARISON.md" "$tmp/sanitize.log"; do [[ -f "$f" ]] && { echo "--- $f"; tail -40 "$f"; }; done
  exit 1
}

start=$SECONDS
# xz's fastest level, a bundle 6.5 MB larger than the default level's (37.7 against 31.2 MB,
# 45 s against 4 min 45 s, 2026-11-30): the limit on what travels is raised by that much,
# so that the rehearsal fails when a real bundle would no longer fit (the tracked tree
# grows with every committed result).
DEVICE_DIR="$tmp/device" XZ_LEVEL=0 TRAVEL_LIMIT_MIB=70 MODEL_ARGS="--init 2,64,2 -b 2 -t 16" \
  bash tools/device/bundle.sh "$build" >"$tmp/bundle.log" 2>&1 || {
  rc=$?
  fail "bundle.sh exited $rc ($(grep -m1 'would travel' "$tmp/bundle.log"))"
}
# The budget is the CPU's, not an H100's: every (op, shape) sweep measures the host's
# memory ceilings first (first-touching buffers of 256 MiB to 1 GiB: seconds where page
# faults are slow; `time build/wb device --backend cpu` shows it), 48 times, beside the
# other tests of ctest.
env -i PATH=/usr/bin:/bin HOME="$tmp" OUT="$tmp/out" BUDGET_S=900 RESERVE_S=60 REHEARSE=1 DEVICE_DIR="$tmp/device" \
  WORK="$tmp/work" bash tools/device/core.sh >"$tmp/core.log" 2>&1 || fail "core.sh exited $?"
anchors_start=$SECONDS
# PyTorch: the project's venv, as a GPU host's /opt/torch/.venv (its HOME is $tmp, where
# tools/python/python.sh would find none).
env -i PATH=/usr/bin:/bin HOME="$tmp" OUT="$tmp/out" BUDGET_S=300 REHEARSE=1 REHEARSE_NVCC="${REHEARSE_NVCC:-0}" \
  PYTHON="$(bash tools/python/python.sh --which)" \
  REHEARSE_NVCC_TRAINERS="${REHEARSE_NVCC_TRAINERS:-0}" \
  DEVICE_DIR="$tmp/device" WORK="$tmp/awork" bash tools/device/anchors.sh >"$tmp/anchors.log" 2>&1 || fail "anchors.sh exited $?"

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
for run in default-fp32 default-tf32 default-bf16 launched-bf16 best-fp32 best-tf32 best-bf16; do
  grep -q "^trainer $run rc=0: summary: 8 steps" <<<"$summary" || fail "trainer $run did not run 8 steps"
done
workloads=$(ls "$tmp/device/workloads" | wc -l)
swept=$(ls "$r/sweep/"*.json 2>/dev/null | wc -l)
((swept == workloads)) || fail "$swept sweep reports of $workloads workloads"
bf16_workloads=$(ls "$tmp/device/workloads-bf16" | wc -l)
bf16_swept=$(ls "$r/sweep-bf16/"*.json 2>/dev/null | wc -l)
((bf16_swept == bf16_workloads)) || fail "$bf16_swept bf16 sweep reports of $bf16_workloads workloads"
grep -q "^best rc=0" <<<"$summary" || fail "wb best failed"
# The CPU ceilings of those sweeps (issue 27, item 8): the memory streams measured on warm
# buffers larger than the last-level cache (256 MiB where its size is unknown, as on a
# microVM without sysfs cache entries), and no record far above the roofline beyond it.
# "Far": more than twice it. A virtual machine's memory bandwidth moves between
# measurements, by much more than 10% from one sweep to the next, so an op swept after a
# low measurement lands above its roofline (results/ci/README.md has the measurement); a
# ceiling measured inside the cache is off by more than 2x, which this still catches.
# wb itself flags every record above 100% in the report (above_ceiling) and warns.
python3 - "$r"/sweep/*.json <<'PY' || fail "the CPU ceilings of the sweeps (above)"
import json, sys
bad = []
for path in sys.argv[1:]:
    rep = json.load(open(path))
    c, llc = rep["context"]["ceilings"], rep["context"]["device"]["l2_bytes"]
    if not rep["records"]:
        continue
    if not all(c.get(k, 0) > 0 for k in ("read_gbps", "copy_gbps", "update_gbps", "memory_gbps", "threads")):
        bad.append(f"{path}: streams not measured: {c}")
    elif not (c["stream_bytes"] > llc > 0 or (llc == 0 and c["stream_bytes"] >= 256 << 20
                                              and "last-level cache unknown" in c["method"])):
        bad.append(f"{path}: stream buffers of {c['stream_bytes']} bytes, last-level cache {llc}")
    elif "pre-faulted" not in c["method"]:
        bad.append(f"{path}: method does not say the buffers were pre-faulted: {c['method']}")
    bad += [f"{path}: {x['op']} at {x['throughput']['pct_of_roofline']:.0f}% of the roofline, above the ceiling"
            for x in rep["records"]
            if (x.get("throughput") or {}).get("above_ceiling") and x["throughput"]["pct_of_roofline"] > 200]
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
grep -q '"cpu-' "$tmp/out/best.json" || fail "best.json has no section of this CPU"
# The anchors stage: every part ran and every parse found something.
[[ -s "$tmp/out/anchors.tgz" && -s "$tmp/out/anchors.md" ]] || fail "no anchors.tgz or anchors.md in OUT"
tar -C "$tmp/back" -xzf "$tmp/out/anchors.tgz" || fail "anchors.tgz does not unpack"
a="$tmp/back/a"
anchors=$(cat "$a/summary.md")
grep -q "^model: .* rc=0 " <<<"$anchors" || fail "anchors: the model file was not written"
for t in train_gpt2fp32cu train_gpt2cu; do
  grep -q "^train $t .* rc=0 parse rc=0: $t: [1-9][0-9]* steps timed" <<<"$anchors" || fail "anchors: llm.c $t not parsed"
done
for run in eager-tf32 eager-bf16; do
  grep -q "^torch $run rc=0: " <<<"$anchors" || fail "anchors: PyTorch $run did not run"
done
for run in compile-tf32 compile-bf16; do  # this machine's torch may lack torch.compile: then a reason
  grep -qE "^torch $run( rc=0: |: skipped, rc=[0-9]+: .+)" <<<"$anchors" || fail "anchors: PyTorch $run neither ran nor said why not"
done
programs=$(ls tools/device/fixtures/dev/ | sed 's/\.log$//')
for p in $programs; do
  grep -q "\"program\": \"$p\"" "$a/dev/records.jsonl" || fail "anchors: no timing parsed from the fixture of $p"
  grep -q "^$p|.*|0|wb sweep " "$a/dev/sweeps.txt" || fail "anchors: wb sweep of $p's op failed"
done
if [[ "${REHEARSE_NVCC:-0}" == 1 ]]; then
  built="residual_forward"; [[ "${REHEARSE_NVCC_TRAINERS:-0}" == 1 ]] && built="$built train_gpt2fp32cu train_gpt2cu"
  for b in $built; do
    grep -q "^build $b rc=0 " "$a/build/rc.txt" || fail "anchors: nvcc did not build $b ($(tail -3 "$a/build/$b.log" 2>/dev/null))"
  done
fi
# The predictions' fixture (tools/device/fixtures/predictions.json) made to fit this
# rehearsal: a CPU variant's source_hash follows its code, so each "from the rehearsal" is
# filled from the record measured here (the deliberately wrong hashes stay), and the steps
# name this bundle's workloads. The predicted times stay the fixture's: nothing is fitted.
python3 - tools/device/fixtures/predictions.json "$tmp/predictions.json" "$tmp/device/workloads.json" "$r"/sweep/*.json \
  <<'PY' >"$tmp/predictions.log" 2>&1 || fail "the predictions' fixture: $(cat "$tmp/predictions.log")"
import json, sys
src, dst, workloads, reports = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
doc = json.load(open(src))
key = lambda x: (x["op"], x["backend"], x["variant"], json.dumps(x["shape"], sort_keys=True), json.dumps(x["params"], sort_keys=True))
measured = {key(rec): rec["source_hash"] for path in reports for rec in json.load(open(path))["records"]}
filled = 0
for p in doc["predictions"]:
    if p["source_hash"] == "from the rehearsal" and key(p) in measured:
        p["source_hash"] = measured[key(p)]
        filled += 1
for s in doc["steps"]:
    s["workloads"] = workloads
json.dump(doc, open(dst, "w"), indent=1)
print(f"{filled} source_hash filled from the rehearsal's reports")
sys.exit(0 if filled else 1)
PY
# The report stage, from both, with the predictions scored.
python3 tools/device/report.py --core "$r" --anchors "$a" --predictions "$tmp/predictions.json" --out "$tmp/COMPARISON.md" \
  --title rehearsal >"$tmp/report.log" 2>&1 || fail "report.py exited $?"
for p in $programs; do
  grep -qE "^\| $p \| .*\| [0-9.]+ \| [a-z_0-9]+ \| cpu/[0-9]+ .*\| [0-9.]+ \| shapes differ \|$" "$tmp/COMPARISON.md" ||
    fail "COMPARISON.md: no row with both figures for $p"
done
for row in "wb default-tf32" "wb best-bf16" "llm.c train_gpt2fp32cu" "llm.c train_gpt2cu" "PyTorch eager-tf32" "PyTorch eager-bf16"; do
  grep -q "^| $row" "$tmp/COMPARISON.md" || fail "COMPARISON.md: no row $row"
done
# The predictions, scored without refit: some matched (their hashes filled above), the
# wrong hash listed as changed code, the unswept shape counted, the launched steps matched
# to the CPU's runs (launched: the CPU has no graph) and the graph step not measured.
grep -q "^## Predictions made before this window: $tmp/predictions.json$" "$tmp/COMPARISON.md" ||
  fail "COMPARISON.md: no section of the predictions"
grep -qE "^Scores: [1-9][0-9]* of 5 predictions matched by a measurement; MAPE [0-9.]+%" "$tmp/COMPARISON.md" ||
  fail "COMPARISON.md: no prediction matched ($(grep '^Scores' "$tmp/COMPARISON.md"))"
grep -q "^- fused_residual_layernorm_forward B=2,T=16,C=64 cpu/1 -: predicted for 000000000000, measured " "$tmp/COMPARISON.md" ||
  fail "COMPARISON.md: the prediction of a changed source_hash is not listed as code changed"
grep -q "^Not measured in this window: 1 predictions (layernorm_forward 1)\.$" "$tmp/COMPARISON.md" ||
  fail "COMPARISON.md: the unmeasured prediction is not counted"
for step in "bf16 | defaults | launched | 40.000 | [0-9.]+ | default-bf16, 7 steps | [-+][0-9.]+% |" \
  "fp32 | defaults | launched | 30.000 | [0-9.]+ | default-fp32, 7 steps | [-+][0-9.]+% |" \
  "bf16 | defaults | graph | 38.000 | — | not measured in this window | — |"; do
  grep -qE "^\| [^|]*workloads.json \| ${step//|/\\|}$" "$tmp/COMPARISON.md" || fail "COMPARISON.md: no step row '$step'"
done
files=$(find "$tmp/out" -type f | wc -l)
((files <= 8)) || fail "$files files in OUT with the anchors' (a device call brings back 8)"
[[ "${KEEP:-0}" == 1 ]] && echo "kept: $tmp (COMPARISON.md, back/r, back/a)"
echo "anchors and report rehearsed in $((SECONDS - anchors_start)) s: $(wc -l <"$a/dev/records.jsonl") llm.c kernel timings from" \
  "$(wc -w <<<"$programs") fake programs, 2 fake trainers, $(grep -c '^torch .* rc=0' <<<"$anchors") PyTorch runs on the CPU," \
  "$(wc -l <"$a/dev/sweeps.txt") wb sweeps, COMPARISON.md written"
# The sanitize stage, a device call of its own (its own OUT): compute-sanitizer's stand-in
# around wb check in emulation; its table, the report it parsed and the refusal it noted.
sanitize_start=$SECONDS
env -i PATH=/usr/bin:/bin HOME="$tmp" OUT="$tmp/sout" BUDGET_S=200 REHEARSE=1 DEVICE_DIR="$tmp/device" \
  WORK="$tmp/swork" bash tools/device/sanitize.sh >"$tmp/sanitize.log" 2>&1 || fail "sanitize.sh exited $?"
sanitize_files=$(find "$tmp/sout" -type f | wc -l)
((sanitize_files <= 8)) || fail "$sanitize_files files in the sanitize stage's OUT"
for f in sanitize.log sanitize.md sanitize.tgz; do [[ -s "$tmp/sout/$f" ]] || fail "no $f in the sanitize stage's OUT"; done
sanitized=$(cat "$tmp/sout/sanitize.md")
grep -q '^| residual_forward | 0 | 0 | 0 | refused (rc=1) |$' <<<"$sanitized" || fail "sanitize: no clean row of residual_forward"
grep -q '^| layernorm_forward | 1 | 0 | 0 | refused (rc=1) |$' <<<"$sanitized" || fail "sanitize: the planted memcheck error was not counted"
grep -q '^ *1 - Invalid __global__ write of size 4 bytes -- at layernorm_forward_kernel.* in variants/layernorm_forward/01_naive.cu:42$' \
  <<<"$sanitized" || fail "sanitize: the planted report was not listed with where it fired"
[[ $(grep -c '^racecheck on .*: no error summary, rc=1: ' <<<"$sanitized") == 1 ]] || fail "sanitize: the refusal was not noted once"
echo "sanitize rehearsed in $((SECONDS - sanitize_start)) s"
# The GPU CI job's script (.github/workflows/gpu.yml runs it with --backend cuda), with the
# check in emulation and the gate on the CPU at a tiny shape, one op: first without a
# baseline (it records one and says so), then against what it recorded (a table). Timing
# on a shared machine is noise: the slowdown allowed is huge, the verdicts are not asserted.
ci_start=$SECONDS
ci=(bash tools/device/gpu_ci.sh --no-build --check-backend emu --gate-backend cpu --shape B=2,T=16,C=32
  --max-slowdown 100000% --out-dir "$tmp/ci/out" residual_forward)
WB_BUILD_DIR="$build" "${ci[@]}" --baseline-dir "$tmp/ci/none" --summary "$tmp/ci/first.md" >"$tmp/ci.log" 2>&1 ||
  fail "gpu_ci.sh (no baseline) exited $? ($(tail -5 "$tmp/ci.log"))"
grep -q "no baseline for .*: recorded one" "$tmp/ci/first.md" || fail "gpu_ci.sh: the first run did not say it recorded a baseline"
[[ -s "$tmp/ci/out/baseline/residual_forward.json" ]] || fail "gpu_ci.sh: no baseline recorded"
WB_BUILD_DIR="$build" "${ci[@]}" --baseline-dir "$tmp/ci/out/baseline" --summary "$tmp/ci/second.md" >>"$tmp/ci.log" 2>&1 ||
  fail "gpu_ci.sh (against its baseline) exited $? ($(tail -5 "$tmp/ci.log"))"
grep -q "^### wb check (emu): passed" "$tmp/ci/second.md" || fail "gpu_ci.sh: the check's verdict is not in the summary"
grep -q "^### regression gate against .*: passed" "$tmp/ci/second.md" || fail "gpu_ci.sh: the gate's verdict is not in the summary"
grep -q "^| .*residual_forward" "$tmp/ci/second.md" || fail "gpu_ci.sh: the gate's table is not in the summary"
echo "gpu_ci.sh rehearsed in $((SECONDS - ci_start)) s (check in emulation, gate on the CPU, with and without a baseline)"
echo "rehearsal passed in $((SECONDS - start)) s: bundle $(du -h "$tmp/device/bundle.tar.xz" | cut -f1) (xz -0)," \
  "checks of 2 ops in emulation, $swept + $bf16_swept sweeps and 7 trainer runs on the CPU, $files files back"
