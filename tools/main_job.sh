#!/usr/bin/env bash
# The main job of the README: build wb, then check layernorm_forward and sweep it at
# the llmc-dev shape, on the default backend: CUDA when a device is usable, otherwise
# the CPU. The report lands in out/<device-slug>/layernorm_forward.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
wb="${WB_BUILD_DIR:-build}/wb"

"$wb" list layernorm_forward
"$wb" check layernorm_forward
"$wb" sweep layernorm_forward --shape llmc-dev --out "out/{device}/layernorm_forward.json"
