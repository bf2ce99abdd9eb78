#!/usr/bin/env bash
# The main job of the README. Builds wb, then works on layernorm_forward's ladder:
#   with a usable GPU: check every CUDA variant, then sweep them at the llmc-dev shape;
#   without one: check every CUDA variant in emulation (bounds, barriers, launch
#   limits: the CUDA code runs), then sweep what can be timed here, the CPU variants.
# The report lands in out/<device-slug>/layernorm_forward.json. Then it trains GPT-2 for a
# few steps on TinyShakespeare with the committed results/best.json (the section of this
# device, else the closest one, named in the output).
set -euo pipefail
cd "$(dirname "$0")/.."
# The main job uses no torch or triton: their venv (several GB, docs/python.md) is left
# to the tests' set-up command unless WB_SKIP_VENV=0 asks for it here.
WB_SKIP_VENV="${WB_SKIP_VENV:-1}" bash tools/install_deps.sh
bash tools/build.sh
build="${WB_BUILD_DIR:-build}"
wb="$build/wb"

"$wb" list layernorm_forward
if "$wb" device --backend cuda --slug >/dev/null 2>&1; then
  "$wb" check layernorm_forward --backend cuda
  "$wb" sweep layernorm_forward --backend cuda --shape llmc-dev --out "out/{device}/layernorm_forward.json"
else
  echo "main_job: no usable GPU: the CUDA variants run in emulation (checked, never timed)"
  "$wb" check layernorm_forward --backend emu
  "$wb" sweep layernorm_forward --backend cpu --shape llmc-dev --out "out/{device}/layernorm_forward.json"
fi

# Train: tokens into out/data, then a few steps on the kernels of results/best.json.
# prepare_data takes TinyShakespeare and GPT-2's vocabulary from $WB_DATA, the build's
# offline data cache or an earlier download in out/data, else downloads them there, each
# checked against its pinned SHA-256 (trainer/README.md, "Where the data comes from").
"$build/prepare_data" tinyshakespeare --out out/data
"$build/trainer" --kernels=results/best.json --init 4,128,4 -b 4 -t 64 --steps 10 --lr 1e-3 \
  --train out/data/tiny_shakespeare_train.bin --val out/data/tiny_shakespeare_val.bin --val-every 10
