#!/usr/bin/env bash
# Configures and builds wb (Release) into ${WB_BUILD_DIR:-build}. Extra arguments go to
# cmake's configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=90.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${WB_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
