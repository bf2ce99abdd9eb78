#!/usr/bin/env bash
# Installs the Debian 12 packages wb needs, and only those that are missing (safe to
# run again). The CUDA toolkit is not a Debian package: when nvcc is found (on PATH or
# in /usr/local/cuda/bin) the CUDA variants are built, otherwise wb builds the CPU
# backend only. clang and its runtime libraries (libFuzzer, the sanitizers) build the
# fuzz targets of ci/fuzz.sh. ocl-icd-opencl-dev: Debian's oneDNN is built with the
# OpenCL GPU runtime, so its CMake package config requires OpenCL's headers and library
# (only a recommendation of libdnnl-dev, which --no-install-recommends leaves out).
# Last, the project's Python venv (torch and triton pinned: tools/python/venv.sh,
# docs/python.md), built once per set of pins outside the clone; optional: without PyPI
# it says so and the install goes on. python3-venv makes it, python3-dev's headers are
# what torch.compile's C++ backend compiles against; Debian's numpy, jsonschema,
# matplotlib and yaml serve the tests that need no torch where there is no venv. No
# python3-torch: the project has one PyTorch, the venv's (Debian's is 1.13).
# WB_SKIP_VENV=1 leaves the venv out.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  libfmt-dev nlohmann-json3-dev libbenchmark-dev libcli11-dev libgtest-dev libgmock-dev
  libopenblas-dev libopenblas-openmp-dev libomp-dev libboost-context-dev libdnnl-dev
  libicu-dev curl
  ocl-icd-opencl-dev
  clang libclang-rt-14-dev
  python3 python3-venv python3-dev python3-numpy python3-jsonschema python3-matplotlib python3-yaml
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: every package is installed"
else
  echo "install_deps: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install_deps: run as root or install sudo" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install_deps: nvcc found: the CUDA variants will be built"
else
  echo "install_deps: no nvcc: building the CPU backend only (install the CUDA toolkit for the CUDA variants)"
fi

if [ "${WB_SKIP_VENV:-0}" = 1 ]; then
  echo "install_deps: WB_SKIP_VENV=1: no Python venv (the tests that need torch or triton skip)"
elif ! bash "$(dirname "$0")/python/venv.sh"; then
  echo "install_deps: going on without the Python venv (the tests that need torch or triton skip)"
fi
