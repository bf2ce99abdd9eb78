#!/usr/bin/env bash
# The main job of the README. Builds wb, then works on layernorm_forward's ladder:
#   with a usable GPU: check every CUDA variant, then sweep them at the llmc-dev shape;
#   without one: check every CUDA variant in emulation (bounds, barriers, launch
#   limits: the CUDA code runs), then sweep what can be timed here, the CPU variants.
# The report lands in out/<device-slug>/layernorm_forward.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
wb="${WB_BUILD_DIR:-build}/wb"

"$wb" list layernorm_forward
if "$wb" device --backend cuda --slug >/dev/null 2>&1; then
  "$wb" check layernorm_forward --backend cuda
  "$wb" sweep layernorm_forward --backend cuda --shape llmc-dev --out "out/{device}/layernorm_forward.json"
else
  echo "main_job: no usable GPU: the CUDA variants run in emulation (checked, never timed)"
  "$wb" check layernorm_forward --backend emu
  "$wb" sweep layernorm_forward --backend cpu --shape llmc-dev --out "out/{device}/layernorm_forward.json"
fi
