#!/usr/bin/env bash
# tools/device/core.sh: the campaign's `core` stage on a GPU host, from the bundle of
# tools/device/bundle.sh (carry .device). Runs within BUDGET_S seconds (default 540), each
# part cut to what is left, in this order of value:
#   probe    nvidia-smi, the libraries found, `wb device` (ceilings)
#   check    `wb check OP --backend cuda` for every op, 8 ops at a time (one process per op,
#            so a device-losing fault costs that op only; a failing op is rerun --isolate)
#   trainer  GPT-2 124M (d12), B=4, T=1024, default variants, fp32, tf32 and bf16 (each one
#            CUDA graph), and bf16 again launched kernel by kernel with --op-times
#   sweep    every (op, shape) of the trainer's step at B=4, T=1024, one process and one
#            report per (op, shape), the cheap references first
#   best     `wb best` over those reports into a copy of results/best.json
#   trainer  again with that best.json, fp32, tf32 and bf16
#   bf16     the bf16 ops swept at the same shapes, while time is left
# The PyTorch rungs (docs/torch.md) are left out of check and sweep here: torch.compile
# compiles for minutes at these shapes, which the window's budget does not hold; their
# sweep is a window of its own (docs/torch.md, "On a GPU").
# Everything lands in $OUT (default out/device): run.log, results.tgz (reports and logs,
# repacked after every part), best.json, summary.md.
# To go on from an earlier run, choose the parts and the workloads:
#   STAGES="sweep best"  (default "check trainer sweep best bf16"; probe always runs)
#   SWEEP_ARGS           wb sweep's timing flags (default "--repetitions 10 --min-time 0.005")
#   SWEEPS="05 06 07"    (numbers of .device/workloads/NN-*.json; default all), BF16_SWEEPS
# `best` takes the committed reports of results/<slug>/sweep/ with this run's over them.
# REHEARSE=1 runs it all on a machine without a GPU (tools/device/rehearse.sh, a ctest):
# checks in emulation (of the ops in OPS), sweeps and trainer on the CPU, the model of
# MODEL_ARGS; DEVICE_DIR (default .device) and WORK (default /tmp/wbdev) move its folders.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/device/stage_start.sh run.log

device_dir="${DEVICE_DIR:-.device}"
work="${WORK:-/tmp/wbdev}"
if [[ "${REHEARSE:-0}" == 1 ]]; then
  check_backend=emu time_backend=cpu
  model_args="${MODEL_ARGS:---init 2,64,2 -b 2 -t 16}"
  check_ops="${OPS:-residual_forward layernorm_forward_bf16}"
  sweep_args="${SWEEP_ARGS:---repetitions 2 --min-time 0.0005 --no-flush}"  # the plumbing, not the times
else
  check_backend=cuda time_backend=cuda
  model_args="${MODEL_ARGS:---init d12 -b 4 -t 1024}"
  check_ops="${OPS:-}"
  sweep_args="${SWEEP_ARGS:---repetitions 10 --min-time 0.005}"
fi
unpack_stage r results.tgz summary.md check sweep sweep-bf16 trainer

# The CUDA libraries: the toolkit's, else the Python environment's nvidia/*/lib.
source tools/device/cuda_libs.sh
cuda_library_path "$work/bin/lib" python3 probe
export LD_LIBRARY_PATH="$LIBDIRS:${LD_LIBRARY_PATH:-}"
export OMP_NUM_THREADS="$(nproc)"  # every core: 16 on the device machines

gpu_state() { command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu="$1" --format=csv; }
gpu=$(gpu_state name | tail -1)
note "# wb on ${gpu:-a machine without nvidia-smi}, $(date -u +%FT%TZ); checks on $check_backend, timing on $time_backend"
gpu_state name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw
ldd "$wb" | grep -E 'not found|cuda|cublas|cudnn|dnnl|openblas'
timeout 60 "$wb" device --backend "$time_backend" | tee "$work/r/device.txt"
slug=$("$wb" device --backend "$time_backend" --slug 2>/dev/null || echo unknown-device)
note "device slug: $slug; probe done at $((SECONDS - t0)) s"
pack

stages=" ${STAGES:-check trainer sweep best bf16} "
has() { [[ "$stages" == *" $1 "* ]]; }
picked() {  # the workloads files of a folder whose number is in $2 (all when empty)
  local dir=$1 numbers=$2 f
  for f in "$dir"/*.json; do
    [[ -z "$numbers" || " $numbers " == *" $(basename "$f" | cut -c1-2) "* ]] && echo "$f"
  done
}

# check: every op, 8 processes of 2 OpenMP threads each.
if has check; then
  ops=${check_ops:-$("$wb" list 2>/dev/null | grep -E '^[a-z_0-9]+ +\[' | awk '{print $1}')}
  check_one() {
    local op=$1 limit=$2 extra=${3:-}
    OMP_NUM_THREADS=2 timeout "$limit" "$wb" check "$op" --backend "$check_backend" --variants no-torch $extra \
      --json "$work/r/check/$op.json" \
      >"$work/r/check/$op.log" 2>&1
    local rc=$?
    echo "check $op ${extra:+($extra) }rc=$rc"
  }
  export -f check_one; export wb work check_backend
  limit=$(( $(left) / 3 )); ((limit > 180)) && limit=180
  echo $ops | tr ' ' '\n' | xargs -P 8 -I{} bash -c "check_one {} $limit" | sort | tee "$work/r/check/rc.txt"
  for op in $(grep -v 'rc=0$' "$work/r/check/rc.txt" | awk '{print $2}' | head -3); do  # at most 3 reruns
    cp "$work/r/check/$op.log" "$work/r/check/$op.first.log"
    check_one "$op" 45 --isolate | tee -a "$work/r/check/rc.txt"
  done
  for op in $(grep -v 'rc=0$' "$work/r/check/rc.txt" | awk '{print $2}' | sort -u); do  # what failed, in the summary
    { echo "## check $op"; grep -vE ' ok ' "$work/r/check/$op.log" | tail -8; } >>"$summary"
  done
  note "check: $(grep -c 'rc=0$' "$work/r/check/rc.txt") op runs passed, failures: $(grep -v 'rc=0$' "$work/r/check/rc.txt" | awk '{print $2, $NF}' | tr '\n' ';'); done at $((SECONDS - t0)) s"
  pack
fi

train() {  # name, seconds, trainer flags...
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$trainer" --backend "$time_backend" $model_args --steps 8 --lr 3e-4 \
    --train "$device_dir/data/tiny_shakespeare_train.bin" --val "$device_dir/data/tiny_shakespeare_val.bin" \
    --log "$work/r/trainer/$name.jsonl" "$@" >"$work/r/trainer/$name.log" 2>&1
  local rc=$?
  note "trainer $name rc=$rc: $(grep -E '^summary:|outside the ops|error' "$work/r/trainer/$name.log" | tail -3 | tr '\n' ' ')"
}
if has trainer; then
  train default-fp32 60
  train default-tf32 60 --precision tf32
  train default-bf16 60 --precision bf16
  # The same step launched kernel by kernel, each op timed by CUDA events: against
  # default-bf16 (one CUDA graph, the default on cuda), the launch gaps the graph closes.
  train launched-bf16 60 --precision bf16 --cuda-graph off --op-times
  pack
fi

# sweep: one (op, shape) per process, the smallest shapes (cheapest references) first.
reserve="${RESERVE_S:-150}"  # for best and the trainer after the sweeps
has best || reserve=10
for f in $(has sweep && picked "$device_dir/workloads" "${SWEEPS:-}"); do
  l=$(( $(left) - reserve ))
  if ((l < 20)); then note "sweep: stopped for time before $(basename "$f")"; break; fi
  s=$SECONDS
  timeout "$l" "$wb" sweep --workloads "$f" --backend "$time_backend" --variants no-torch --seed 1 $sweep_args \
    --out "$work/r/sweep/$(basename "$f")" >"$work/r/sweep/$(basename "$f" .json).log" 2>&1
  rc=$?
  echo "sweep $(basename "$f") rc=$rc in $((SECONDS - s)) s"
done
note "sweep fp32: $(ls "$work/r/sweep/"*.json 2>/dev/null | wc -l) reports; done at $((SECONDS - t0)) s"
pack

cp results/best.json "$work/r/best.json"
mkdir -p "$work/all-sweeps"
cp results/"$slug"/sweep/*.json "$work/all-sweeps/" 2>/dev/null
cp "$work/r/sweep/"*.json "$work/all-sweeps/" 2>/dev/null
if has best && ls "$work/all-sweeps/"*.json >/dev/null 2>&1; then
  timeout 30 "$wb" best "$work/all-sweeps/"*.json --out "$work/r/best.json" >"$work/r/best.log" 2>&1
  note "best rc=$?"
  cp "$work/r/best.json" "$OUT/best.json"
  train best-fp32 50 --kernels "$work/r/best.json"
  train best-tf32 50 --kernels "$work/r/best.json" --precision tf32
  train best-bf16 50 --kernels "$work/r/best.json" --precision bf16
  timeout 20 "$trainer" --backend "$time_backend" $model_args --kernels "$work/r/best.json" --print-plan \
    >"$work/r/trainer/plan.txt" 2>&1
fi
pack

# bf16: the bf16 form of each swept (op, shape), while time is left.
for f in $(has bf16 && picked "$device_dir/workloads-bf16" "${BF16_SWEEPS:-}"); do
  l=$(( $(left) - 15 ))
  if ((l < 15)); then note "sweep bf16: stopped for time before $(basename "$f")"; break; fi
  timeout "$l" "$wb" sweep --workloads "$f" --backend "$time_backend" --variants no-torch --seed 1 $sweep_args \
    --out "$work/r/sweep-bf16/$(basename "$f")" >"$work/r/sweep-bf16/$(basename "$f" .json).log" 2>&1
  rc=$?
  echo "sweep $(basename "$f") rc=$rc"
done
note "sweep bf16: $(ls "$work/r/sweep-bf16/"*.json 2>/dev/null | wc -l) reports; all done at $((SECONDS - t0)) s"
gpu_state clocks.sm,clocks.mem,temperature.gpu,power.draw
pack
