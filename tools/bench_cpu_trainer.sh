#!/usr/bin/env bash
# A benchmark, not a test: GPT-2 124M training steps on the CPU, wb's trainer in fp32 and
# in bf16 (--precision bf16: llm.c's mixed precision) against PyTorch eager in fp32 and
# under bf16 autocast (and llm.c's train_gpt2.c when its source is given), on the same model
# file (wb's random init, d12), the same TinyShakespeare tokens, B=4, T=64, the same
# thread count. The runs are interleaved, round after round, so that a machine that gets
# busier slows every contender alike; each round's first step is a warm-up and is left
# out. Prints every contender's median ms/step over all rounds, and the ratios.
#
#   bash tools/bench_cpu_trainer.sh [--rounds 3] [--steps 6] [--threads N]
#        [--kernels results/best.json] [--llmc DIR] [--keep DIR]
#
# --llmc DIR: a copy of karpathy/llm.c's source (never committed here). Its train_gpt2.c
# is built with its Makefile's flags (-Ofast -march=native -fopenmp) from a copy in the
# scratch folder whose loop runs --steps steps without its validation and sampling (a
# sed, checked); its step time is the one it prints ("took X ms").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rounds=3 steps=6 threads=$(nproc) kernels=results/best.json llmc="" keep="" build=${WB_BUILD_DIR:-build}
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --llmc) llmc=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "bench_cpu_trainer.sh: unknown argument $1" >&2; usage ;;
  esac
done
for n in "$rounds" "$steps" "$threads"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench_cpu_trainer.sh: give positive whole numbers (got '$n')" >&2; exit 2; }
done
((steps >= 2)) || { echo "bench_cpu_trainer.sh: --steps must be at least 2 (the first is a warm-up)" >&2; exit 2; }
[[ -x $build/trainer && -x $build/prepare_data ]] || { echo "bench_cpu_trainer.sh: no $build/trainer: run bash tools/build.sh" >&2; exit 2; }
[[ -f $kernels ]] || { echo "bench_cpu_trainer.sh: no kernels file $kernels" >&2; exit 2; }
# The project's Python (tools/python/python.sh): the venv's pinned torch, the one PyTorch
# the reference is checked against.
py=$(bash tools/python/python.sh --which)
$py -c "import torch" 2>/dev/null || { echo "bench_cpu_trainer.sh: $py cannot import torch (bash tools/install_deps.sh builds the project's Python venv: docs/python.md)" >&2; exit 2; }
if [[ -n $llmc ]]; then
  [[ -f $llmc/train_gpt2.c && -d $llmc/llmc ]] || { echo "bench_cpu_trainer.sh: $llmc holds no llm.c source (train_gpt2.c, llmc/)" >&2; exit 2; }
  llmc=$(cd "$llmc" && pwd)
fi

if [[ -n $keep ]]; then work=$keep; mkdir -p "$work"; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
export OMP_NUM_THREADS=$threads OMP_PROC_BIND=false

# The tokens, and the model every contender starts from (wb's d12 init, saved unchanged:
# one step at learning rate 0).
if [[ ! -f $work/data/tiny_shakespeare_train.bin ]]; then
  "$build/prepare_data" tinyshakespeare --out "$work/data" >/dev/null  # the data looked up, or downloaded
fi
train=$work/data/tiny_shakespeare_train.bin
if [[ ! -f $work/model.bin ]]; then
  "$build/trainer" --backend cpu --init d12 --steps 1 --lr 0 --grad-clip 0 -b 4 -t 64 --train "$train" \
    --save "$work/model.bin" >/dev/null
fi

if [[ -n $llmc ]]; then
  mkdir -p "$work/llmc/dev/data/tinyshakespeare"
  cp -r "$llmc/llmc" "$llmc/train_gpt2.c" "$work/llmc/"
  src=$work/llmc/train_gpt2.c
  sed -i -e "s/for (int step = 0; step <= 40; step++)/for (int step = 0; step < $steps; step++)/" \
    -e 's/if (step % 10 == 0) {/if (0) {/' -e 's/if (step > 0 \&\& step % 20 == 0) {/if (0) {/' "$src"
  if [[ $(grep -c "step < $steps; step++" "$src") != 1 || $(grep -c 'if (0) {' "$src") != 2 ]]; then
    echo "bench_cpu_trainer.sh: this llm.c's train_gpt2.c does not have the loop it expects; adapt the sed" >&2; exit 2
  fi
  (cd "$work/llmc" && ${CC:-gcc} -Ofast -Wno-unused-result -march=native -fopenmp -DOMP train_gpt2.c -lm -o train_gpt2)
  ln -sf "$work/model.bin" "$work/llmc/gpt2_124M.bin"
  ln -sf "$train" "$work/llmc/dev/data/tinyshakespeare/tiny_shakespeare_train.bin"
  ln -sf "$work/data/tiny_shakespeare_val.bin" "$work/llmc/dev/data/tinyshakespeare/tiny_shakespeare_val.bin"
fi

echo "GPT-2 124M (d12, wb's init), B=4, T=64, $threads threads, $rounds rounds of $steps steps (the first of each left out)"
echo "wb kernels: $kernels; scratch: $work"
for ((r = 1; r <= rounds; r++)); do
  "$build/trainer" --backend cpu --model "$work/model.bin" --kernels "$kernels" -b 4 -t 64 --steps "$steps" \
    --train "$train" --log "$work/wb_$r.jsonl" >"$work/wb_$r.out"
  "$build/trainer" --backend cpu --model "$work/model.bin" --kernels "$kernels" -b 4 -t 64 --steps "$steps" \
    --precision bf16 --train "$train" --log "$work/wbbf16_$r.jsonl" >"$work/wbbf16_$r.out"
  $py tools/bench_cpu_trainer.py --model "$work/model.bin" --train "$train" --B 4 --T 64 --steps "$steps" \
    --threads "$threads" --json "$work/torch_$r.json" >"$work/torch_$r.out"
  # PyTorch's CPU bf16 matmuls are oneDNN's: on a CPU without AVX-512 (or under
  # tools/capped.sh) Debian's oneDNN makes none and autocast fails; that contender is
  # then reported as not run, with PyTorch's last words, and the others still are.
  $py tools/bench_cpu_trainer.py --model "$work/model.bin" --train "$train" --B 4 --T 64 --steps "$steps" \
    --threads "$threads" --autocast --json "$work/torchbf16_$r.json" >"$work/torchbf16_$r.out" 2>&1 ||
    rm -f "$work/torchbf16_$r.json"
  if [[ -n $llmc ]]; then (cd "$work/llmc" && ./train_gpt2 >"$work/llmc_$r.out"); fi
  echo "round $r/$rounds done"
done

$py - "$work" "$rounds" "$steps" "$kernels" "${llmc:+llmc}" <<'EOF'
import json, re, statistics, sys
work, rounds, steps, kernels, with_llmc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
wb, wb_ops, wb_outside, wbbf16, torch, torchbf16, llmc = [], [], [], [], [], [], []
torchbf16_failed = None
for r in range(1, rounds + 1):
    lines = [json.loads(l) for l in open(f"{work}/wb_{r}.jsonl")][1:]
    wb += [l["ms"] for l in lines]
    wb_ops += [l["op_ms"] for l in lines]
    wb_outside += [l["outside_ms"] for l in lines]
    wbbf16 += [json.loads(l)["ms"] for l in open(f"{work}/wbbf16_{r}.jsonl")][1:]
    torch += json.load(open(f"{work}/torch_{r}.json"))["ms"][1:]
    try:
        torchbf16 += json.load(open(f"{work}/torchbf16_{r}.json"))["ms"][1:]
    except FileNotFoundError:
        lines = open(f"{work}/torchbf16_{r}.out").read().strip().splitlines()
        torchbf16_failed = lines[-1] if lines else "no output"
    if with_llmc:
        took = [float(m) for m in re.findall(r"took ([0-9.]+) ms", open(f"{work}/llmc_{r}.out").read())]
        if len(took) != steps:
            sys.exit(f"llm.c printed {len(took)} step times, expected {steps}")
        llmc += took[1:]
med = statistics.median
def row(name, xs):
    print(f"  {name:<28} {med(xs):9.1f} ms/step   (min {min(xs):.1f}, max {max(xs):.1f}, {len(xs)} steps)")
print("median step time")
row(f"wb trainer fp32", wb)
print(f"    of which in ops {med(wb_ops):.1f} ms, outside ops {med(wb_outside):.1f} ms ({kernels})")
row(f"wb trainer bf16", wbbf16)
row("PyTorch eager fp32", torch)
if torchbf16_failed:
    print(f"  {'PyTorch eager bf16 autocast':<28} not run: {torchbf16_failed}")
    torchbf16 = []
else:
    row("PyTorch eager bf16 autocast", torchbf16)
if with_llmc:
    row("llm.c train_gpt2.c", llmc)
print(f"wb fp32 / PyTorch fp32       = {med(wb) / med(torch):.3f}")
print(f"wb bf16 / wb fp32            = {med(wbbf16) / med(wb):.3f}")
if torchbf16:
    print(f"wb bf16 / PyTorch bf16       = {med(wbbf16) / med(torchbf16):.3f}")
    print(f"wb fp32 / PyTorch bf16       = {med(wb) / med(torchbf16):.3f}")
if with_llmc:
    print(f"wb / llm.c   = {med(wb) / med(llmc):.3f}")
    print(f"PyTorch / llm.c = {med(torch) / med(llmc):.3f}")
EOF
