#!/usr/bin/env bash
# tools/device/anchors.sh: the campaign's `anchors` stage on a GPU host: what wb is measured
# against, from the bundle of tools/device/bundle.sh (carry .device; llm.c's source rides in
# .device/llmc.tar.xz, never committed). Runs within BUDGET_S seconds (default 540), in this
# order of value, each part logging what it skipped and why:
#   build   (in the background from the start, up to 16 nvcc at a time) llm.c's two CUDA
#           trainers and the dev/cuda programs of the ops wb has; nothing is timed until
#           the builds are done (a busy CPU would slow the launches)
#   model   the GPT-2 124M (d12) random-init model file, written by wb's own trainer
#           (--steps 1 --lr 0: AdamW moves nothing, the file holds the init), so that
#           llm.c's fp32 trainer and PyTorch start from the SAME weights
#   train   llm.c's train_gpt2_fp32.cu (that model file) and train_gpt2.cu (bf16; its own
#           `-e d12` init: it loads bf16 files only), B=4, T=1024, LLMC_STEPS steps (30)
#           on TinyShakespeare, validation and sampling nearly off -> ms/step over steps 2..
#   torch   PyTorch GPT-2 from the same model file (tools/bench_cpu_trainer.py --device cuda):
#           eager tf32, compile tf32, eager bf16, compile bf16 (TORCH_STEPS steps, 20)
#   dev     every kernel number of each dev/cuda program (argv[1] = 1, 2, ... until two in
#           a row print no time), each run cut at DEV_RUN_S (60) seconds, then
#           `wb sweep <op> --shape <the program's shape>` of the wb op that is the same
#           problem (the table below), so that report.py compares like with like
# Everything lands in $OUT (default out/device): anchors.log, anchors.md (the summary) and
# anchors.tgz (folder a/: train/, torch/, dev/, sweep/, build/ logs; repacked after every
# part): 3 files, so core.sh's 4 and these fit one call's 8.
# ANCHORS="train torch dev" (default) chooses the parts; DEV_PROGRAMS="..." the programs.
# REHEARSE=1 (tools/device/rehearse.sh, a ctest) runs it on a machine without a GPU: the
# model file and PyTorch on the CPU at a 2-layer model for 2 steps, the llm.c programs
# replaced by the fake outputs of tools/device/fixtures/ fed through the same parsers, the
# wb sweeps on the CPU at small shapes; with REHEARSE_NVCC=1 it also compiles one dev/cuda
# program (the build line) with nvcc. DEVICE_DIR (default .device) and WORK
# (default /tmp/wbanchors) move its folders.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
source tools/device/stage_start.sh anchors.log

device_dir="$(realpath "${DEVICE_DIR:-.device}")"
work="${WORK:-/tmp/wbanchors}"
rehearse="${REHEARSE:-0}"
fixtures="$repo/tools/device/fixtures"
unpack_stage a anchors.tgz anchors.md train torch dev sweep build
mkdir -p "$work/run"
parse() { "$py" "$repo/tools/device/anchors_parse.py" "$@"; }

# Python: the host's PyTorch environment, else the project's (tools/python/python.sh:
# its venv where it is ready, else this machine's python3; the rehearsal).
py=$(bash tools/python/python.sh --which 2>/dev/null || echo python3)
for p in "${PYTHON:-}" /opt/torch/.venv/bin/python; do
  if [[ -n "$p" && -x "$p" ]]; then py=$p; break; fi
done
# The CUDA libraries, as core.sh finds them: the toolkit's, else the Python environment's.
cuda="${CUDA_HOME:-/usr/local/cuda}"
source tools/device/cuda_libs.sh
CUDA_HOME=$cuda cuda_library_path "$work/bin/lib" "$py"
export LD_LIBRARY_PATH="$LIBDIRS:${LD_LIBRARY_PATH:-}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-16}"
nvcc="${NVCC:-$cuda/bin/nvcc}"
[[ -x "$nvcc" ]] || nvcc=$(command -v nvcc || true)

if [[ "$rehearse" == 1 ]]; then
  backend=cpu
  init="--init 2,64,2" B=2 T=16
  llmc_steps=6 torch_steps=2 dev_run_s=10
  torch_extra="--device cpu --threads 2 --compile-backend eager"
  sweep_args="--repetitions 2 --min-time 0.0005 --no-flush"
else
  backend=cuda
  init="--init d12" B=4 T=1024
  llmc_steps="${LLMC_STEPS:-30}" torch_steps="${TORCH_STEPS:-20}" dev_run_s="${DEV_RUN_S:-60}"
  torch_extra="--device cuda"
  sweep_args="${SWEEP_ARGS:---repetitions 10 --min-time 0.005}"
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
cc="${ARCH:-${cc:-90}}"
note "# anchors on ${gpu:-a machine without nvidia-smi}, $(date -u +%FT%TZ); sm_$cc; python $py ($("$py" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null || echo 'no torch'))$([[ "$rehearse" == 1 ]] && echo '; REHEARSE=1: no GPU, fake llm.c outputs')"
parts=" ${ANCHORS:-train torch dev} "
has() { [[ "$parts" == *" $1 "* ]]; }

# The dev/cuda programs of the ops wb has: what each one's main() runs (shape, storage) and
# the wb op and --shape that is the same problem. "-" in the wb columns: no wb op matches.
# In the order they run: the cheap ones first (each kernel number is a process that also
# runs llm.c's CPU reference: the attention and matmul ones take the longest).
# program|storage in llm.c|llm.c's shape|wb op|wb --shape|note
table="$work/a/dev/table.txt"
cat >"$table" <<'EOF'
layernorm_forward|fp32|B=8,T=1024,C=768|layernorm_forward|B=8,T=1024,C=768|
residual_forward|bf16|B=8,T=1024,C=768|residual_forward_bf16|B=8,T=1024,C=768|
gelu_forward|bf16|B=8,T=1024,C=768|gelu_forward_bf16|B=8,T=1024,C=768|
gelu_backward|bf16|B=8,T=1024,C=768|gelu_backward_bf16|B=8,T=1024,C=768|
fused_residual_forward|bf16|B=8,T=1024,C=768|fused_residual_layernorm_forward_bf16|B=8,T=1024,C=768|
encoder_forward|bf16|B=8,T=1024,C=768,V=50257|encoder_forward_bf16|B=8,T=1024,C=768,V=50257|
encoder_backward|fp32|B=8,T=1024,C=768,V=50257|encoder_backward|B=8,T=1024,C=768,V=50257|
softmax_forward|fp32|B=8,T=1024,V=50257|softmax_forward|B=8,T=1024,V=50257|
crossentropy_forward|fp32|B=8,T=1024,V=50257|crossentropy_forward|B=8,T=1024,V=50257|
crossentropy_softmax_backward|fp32|B=8,T=1024,V=50257|crossentropy_softmax_backward|B=8,T=1024,V=50257|
classifier_fused|fp32 (kernel 5 bf16-capable, built fp32 here)|B=8,T=1024,V=50257|fused_classifier|B=8,T=1024,V=50257|
matmul_backward_bias|bf16|B=8,T=1024,OC=3072|matmul_backward_bias_bf16|B=8,T=1024,OC=3072|
layernorm_backward|kernel 1 fp32, the later ones bf16 (templated on floatX)|B=8,T=1024,C=1600|layernorm_backward_bf16|B=8,T=1024,C=1600|C=1600 (GPT-2 XL) in llm.c's main; kernel 1 is the fp32 problem
adamw|fp32|N=1048576|adamw|N=1048576|
global_norm|bf16 values, fp32 norm|N=70778880|global_norm_bf16|N=70778880|N = (C*4C + C*C)*2*L at C=768, L=12
attention_forward|fp32 in and out; kernels 5-6 keep bf16 intermediates|B=8,T=1024,C=768,NH=12|attention_forward|B=8,T=1024,C=768,NH=12|kernels 5-6 are not the fp32 problem
attention_backward|fp32|B=4,T=1024,C=768,NH=12|attention_backward|B=4,T=1024,C=768,NH=12|
matmul_backward|fp32 (cuBLAS, tf32 on sm_80+)|B=8,T=1024,C=768,OC=3072|matmul_backward|B=8,T=1024,C=768,OC=3072|
matmul_forward|fp32 (the cuBLAS kernels use tf32 on sm_80+)|B=32,T=1024,C=768,OC=3072|matmul_forward|B=32,T=1024,C=768,OC=3072|wb's best may be a tf32 variant: the numeric class is in the report
EOF
shrink() {  # the rehearsal's small form of a shape
  sed -E 's/B=[0-9]+/B=2/; s/T=[0-9]+/T=16/; s/C=[0-9]+/C=64/; s/OC=[0-9]+/OC=128/; s/V=[0-9]+/V=500/; s/NH=[0-9]+/NH=4/; s/N=[0-9]+/N=4096/' <<<"$1"
}
dev_programs="${DEV_PROGRAMS:-$(cut -d'|' -f1 "$table" | tr '\n' ' ')}"

# llm.c's source, from the bundle.
llmc="$work/llmc"
if [[ -f "$device_dir/llmc.tar.xz" ]]; then
  mkdir -p "$llmc" && xz -dc "$device_dir/llmc.tar.xz" | tar -C "$llmc" -xf - && note "llm.c: source unpacked ($(cat "$llmc/COMMIT" 2>/dev/null || echo 'commit unknown'))"
else
  llmc=""
  note "llm.c: no $device_dir/llmc.tar.xz (bundle.sh without LLMC_GIT): the llm.c trainers and kernels are skipped"
fi

# build: every program in the background, up to 16 nvcc at a time, the trainers first.
gencode="--generate-code arch=compute_$cc,code=[compute_$cc,sm_$cc]"
build_one() {  # name, source (relative to llm.c), extra flags...
  local name=$1 src=$2; shift 2
  local s=$SECONDS
  (cd "$llmc/$(dirname "$src")" && timeout 420 "$nvcc" -O3 --use_fast_math -std=c++17 $gencode "$(basename "$src")" "$@" \
    -lcublas -lcublasLt -o "$work/run/$name") >"$work/a/build/$name.log" 2>&1
  local rc=$?
  echo "build $name rc=$rc in $((SECONDS - s)) s" | tee -a "$work/a/build/rc.txt"
}
# llm.c's Makefile links NVML (GPU utilisation in the bf16 trainer's log) where its header
# exists; llmc/mfu.h uses it when <nvml.h> is found: then a library to link is needed too.
nvml=""
if [[ -e "$cuda/include/nvml.h" ]]; then
  for f in "$cuda/lib64/stubs/libnvidia-ml.so" "$cuda/targets/x86_64-linux/lib/stubs/libnvidia-ml.so" \
    /usr/lib/x86_64-linux-gnu/libnvidia-ml.so /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 /usr/lib64/libnvidia-ml.so.1; do
    if [[ -e "$f" ]]; then nvml="$f"; break; fi
  done
  [[ -n "$nvml" ]] || note "build: nvml.h without libnvidia-ml: train_gpt2.cu will not link"
fi
build_list=()
if [[ -n "$llmc" && "$rehearse" != 1 ]]; then
  # train_gpt2.cu: bf16 (-DENABLE_BF16), no cuDNN (no -DENABLE_CUDNN), no NCCL/MPI (no
  # -DMULTI_GPU, -DUSE_MPI), the Makefile's --threads 0; llmc_cuda13.h adapts one call to CUDA 13.
  has train && build_list+=("train_gpt2fp32cu train_gpt2_fp32.cu"
    "train_gpt2cu train_gpt2.cu --threads 0 -DENABLE_BF16 -include $repo/tools/device/llmc_cuda13.h $nvml")
  if has dev; then
    for p in $dev_programs; do
      case $p in matmul_forward|matmul_backward) build_list+=("$p dev/cuda/$p.cu -Xcompiler -fopenmp") ;; *) build_list+=("$p dev/cuda/$p.cu") ;; esac
    done
  fi
elif [[ -n "$llmc" && "${REHEARSE_NVCC:-0}" == 1 ]]; then  # the build lines, proved here
  build_list+=("residual_forward dev/cuda/residual_forward.cu")
  [[ "${REHEARSE_NVCC_TRAINERS:-0}" == 1 ]] && build_list+=("train_gpt2fp32cu train_gpt2_fp32.cu"
    "train_gpt2cu train_gpt2.cu --threads 0 -DENABLE_BF16 -include $repo/tools/device/llmc_cuda13.h $nvml")
fi
builds_pid=""
if ((${#build_list[@]})); then
  if [[ -z "$nvcc" ]]; then
    note "build: no nvcc: the llm.c parts are skipped"; build_list=()
  else
    export -f build_one; export llmc nvcc gencode work
    printf '%s\n' "${build_list[@]}" | xargs -P "${BUILD_JOBS:-16}" -L1 bash -c 'build_one "$@"' _ &
    builds_pid=$!
    note "build: ${#build_list[@]} programs with $nvcc ($gencode), in the background"
  fi
fi

# model: the d12 random-init model file (llm.c's fp32 trainer reads gpt2_124M.bin from its
# working directory), the tokenizer beside it (its samples decode with it).
model="$work/run/gpt2_124M.bin"
s=$SECONDS
timeout 120 "$trainer" --backend "$backend" $init -b 1 -t 64 --steps 1 --lr 0 \
  --train "$device_dir/data/tiny_shakespeare_train.bin" --save "$model" >"$work/a/train/model.log" 2>&1
rc=$?
cp "$device_dir/data/gpt2_tokenizer.bin" "$work/run/" 2>/dev/null
note "model: trainer --backend $backend $init --steps 1 --lr 0 --save gpt2_124M.bin rc=$rc ($(du -h "$model" 2>/dev/null | cut -f1)) in $((SECONDS - s)) s"
[[ $rc == 0 ]] || model=""
# The training tokens cut to LLMC_STEPS batches: llm.c's fp32 trainer runs one epoch.
"$py" - "$device_dir/data/tiny_shakespeare_train.bin" "$work/run/train.bin" $((llmc_steps * B * T + 1)) <<'PY'
import sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, "rb").read()
header = bytearray(data[:1024])
have = int.from_bytes(header[8:12], "little")
n = min(n, have)
header[8:12] = n.to_bytes(4, "little")
open(dst, "wb").write(bytes(header) + data[1024:1024 + 2 * n])
PY
if [[ -n "$builds_pid" ]]; then
  wait "$builds_pid"
  note "build: $(grep -c 'rc=0 ' "$work/a/build/rc.txt") of ${#build_list[@]} built, failed: $(grep -v 'rc=0 ' "$work/a/build/rc.txt" | awk '{print $2}' | tr '\n' ' '); done at $((SECONDS - t0)) s"
fi
pack

# A program of llm.c, or in the rehearsal its fake output. run_llmc LOG TIMEOUT FIXTURE CMD...
run_llmc() {
  local log=$1 limit=$2 fixture=$3; shift 3
  if [[ "$rehearse" == 1 ]]; then
    if [[ "$fixture" == *"#"* ]]; then  # dev/<program>.log#<kernel>: that kernel's section
      awk -v k="### kernel ${fixture##*#}" '/^### kernel /{on = ($0 == k); next} on' "$fixtures/${fixture%%#*}" >"$log" 2>/dev/null
      [[ -s "$log" ]] || { echo "Invalid kernel number" >"$log"; return 1; }
    else
      cp "$fixtures/$fixture" "$log"
    fi
    return 0
  fi
  (cd "$work/run" && timeout "$limit" "$@") >"$log" 2>&1
}

# train: llm.c's trainers, validation at the first and last step on one batch, the sample
# 16 tokens at the last.
if has train; then
  common="-i train.bin -j $device_dir/data/tiny_shakespeare_val.bin -b $B -t $T -v 100000 -m 1 -s 100000 -g 16"
  for spec in "train_gpt2fp32cu|fp32 (tf32 GEMMs on sm_80+), wb's model file" "train_gpt2cu|bf16, its own d12 init (-e d12)"; do
    name=${spec%%|*}
    l=$(( $(left) - 60 )); ((l > 180)) && l=180
    if [[ "$rehearse" != 1 && ! -x "$work/run/$name" ]]; then note "train $name: skipped (not built${llmc:+: see build/$name.log})"; continue; fi
    if [[ "$name" == train_gpt2fp32cu && -z "$model" ]]; then note "train $name: skipped (no model file)"; continue; fi
    if ((l < 30)); then note "train $name: skipped for time"; continue; fi
    if [[ "$name" == train_gpt2cu ]]; then args="$common -e d12 -x $llmc_steps -h 0"; else args="$common"; fi
    run_llmc "$work/a/train/$name.log" "$l" "$name.log" "./$name" $args
    rc=$?
    cmd="(cd run && ./$name $args)"
    parse train "$work/a/train/$name.log" "$name" "$cmd" "$work/a/train/$name.json" >"$work/a/train/$name.parse" 2>&1
    prc=$?
    note "train $name (${spec#*|}) rc=$rc parse rc=$prc: $(cat "$work/a/train/$name.parse")"
  done
  pack
fi

# torch: PyTorch from the same model file.
if has torch && ! "$py" -c 'import numpy, torch' 2>/dev/null; then
  note "torch: skipped: $py lacks $("$py" -c 'import numpy' 2>/dev/null && echo torch || echo numpy) (tools/bench_cpu_trainer.py and reference/pytorch/gpt2.py need both)"
elif has torch; then
  for spec in "eager-tf32|--tf32" "compile-tf32|--tf32 --compile" "eager-bf16|--tf32 --autocast" "compile-bf16|--tf32 --autocast --compile"; do
    name=${spec%%|*} flags=${spec#*|}
    if [[ -z "$model" ]]; then note "torch $name: skipped (no model file)"; continue; fi
    l=$(( $(left) - 30 )); ((l > 240)) && l=240
    if ((l < 40)); then note "torch $name: skipped for time"; continue; fi
    args="--model $model --train $device_dir/data/tiny_shakespeare_train.bin --B $B --T $T --steps $torch_steps $torch_extra $flags --json $work/a/torch/$name.json"
    s=$SECONDS
    timeout "$l" "$py" "$repo/tools/bench_cpu_trainer.py" $args >"$work/a/torch/$name.log" 2>&1
    rc=$?
    if [[ $rc == 0 && -s "$work/a/torch/$name.json" ]]; then
      note "torch $name rc=0: $("$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%.2f ms/step over %d steps after %d, torch %s" % (j["ms_per_step"], len(j["ms"]) - j["warmup"], j["warmup"], j["torch"]))' "$work/a/torch/$name.json") in $((SECONDS - s)) s"
    else
      rm -f "$work/a/torch/$name.json"
      note "torch $name: skipped, rc=$rc: $(grep -v '^\s*$' "$work/a/torch/$name.log" | tail -1)"
    fi
  done
  pack
fi

# dev: each program's kernels, then wb's sweep of the same problem.
if has dev; then
  records="$work/a/dev/records.jsonl"
  : >"$records"
  for p in $dev_programs; do
    row=$(grep "^$p|" "$table") || { note "dev $p: not in the table"; continue; }
    IFS='|' read -r _ storage lshape op wshape why <<<"$row"
    if [[ "$rehearse" != 1 && ! -x "$work/run/$p" ]]; then note "dev $p: skipped (not built${llmc:+: see build/$p.log})"; continue; fi
    if [[ "$rehearse" == 1 && ! -f "$fixtures/dev/$p.log" ]]; then echo "dev $p: skipped (rehearsal: no fixture)"; continue; fi
    if (( $(left) < 40 )); then note "dev $p: skipped for time (and the programs after it)"; break; fi
    ran=0 refused=0 found=""
    for k in $(seq 1 "${MAX_KERNEL:-12}"); do
      l=$(( $(left) - 30 )); ((l > dev_run_s)) && l=$dev_run_s
      if ((l < 5)); then note "dev $p: stopped for time at kernel $k"; break; fi
      log="$work/a/dev/$p-$k.log"
      run_llmc "$log" "$l" "dev/$p.log#$k" "./$p" "$k"
      n=$(parse dev "$log" "$p" "$k" "(cd run && ./$p $k)" "$records")
      if [[ "$n" =~ ^[0-9]+$ ]] && ((n > 0)); then ran=$((ran + 1)) refused=0 found="$found $k"
      else refused=$((refused + 1)); ((refused >= 2)) && break; fi
    done
    shape=$wshape; [[ "$rehearse" == 1 ]] && shape=$(shrink "$wshape")
    if ((ran == 0)); then note "dev $p: no kernel printed a time (see dev/$p-1.log)"; continue; fi
    if [[ "$op" == - ]]; then note "dev $p: kernels$found; no wb op is the same problem ($why)"; continue; fi
    l=$(( $(left) - 20 )); ((l > 150)) && l=150
    if ((l < 15)); then note "dev $p: kernels$found; wb sweep $op skipped for time"; continue; fi
    s=$SECONDS
    timeout "$l" "$wb" sweep "$op" --backend "$backend" --shape "$shape" --variants no-torch --seed 1 $sweep_args \
      --out "$work/a/sweep/$p.json" \
      >"$work/a/sweep/$p.log" 2>&1
    rc=$?
    echo "$p|$op|$shape|$rc|wb sweep $op --backend $backend --shape $shape --variants no-torch --seed 1 $sweep_args --out sweep/$p.json" >>"$work/a/dev/sweeps.txt"
    note "dev $p: kernels$found ($storage, $lshape); wb sweep $op --shape $shape rc=$rc in $((SECONDS - s)) s"
    pack
  done
  note "dev: $(wc -l <"$records") timing records; done at $((SECONDS - t0)) s"
fi
cp "$table" "$work/a/dev/table.txt" 2>/dev/null
echo "$backend" >"$work/a/backend.txt"
echo "$sweep_args" >"$work/a/sweep/args.txt"
note "anchors: all done at $((SECONDS - t0)) s"
pack
