#!/usr/bin/env bash
# Runs a command as a CPU of a lower instruction-set level would, on any x86-64 machine:
# wb's own rungs and its device slug through WB_CPU_ISA (base/cpu_isa.h), oneDNN's
# kernels through ONEDNN_MAX_CPU_ISA, OpenBLAS's through OPENBLAS_CORETYPE (its
# DYNAMIC_ARCH build picks them when it loads, before wb could say anything). Capped
# at avx2, a machine with AVX-512 runs what a CPU with AVX2 and FMA but no AVX-512 runs
# (most laptops and workstations, AMD Zen 2 and 3, many CI runners): the AVX-512 rungs
# are skipped with the reason, oneDNN makes no bf16 matmul, OpenBLAS runs its Haswell
# kernels.
#
#   bash tools/capped.sh [--isa avx2|sse2] COMMAND [ARGS...]
#   e.g. bash tools/capped.sh build/wb device --backend cpu
#        bash tools/capped.sh ctest --test-dir build
#
# What the cap cannot change: the caches, the cores and the memory are this machine's,
# so timings under it are not another CPU's timings.
set -euo pipefail
isa=avx2
if [[ ${1:-} == --isa ]]; then
  isa=${2:-}
  shift 2 || true
fi
case $isa in
  avx2) onednn=AVX2 openblas=Haswell ;;
  sse2) onednn=SSE41 openblas=Core2 ;;  # oneDNN's and OpenBLAS's lowest x86-64 levels
  *) echo "capped.sh: --isa is avx2 or sse2, not '$isa'" >&2; exit 2 ;;
esac
(($#)) || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
export WB_CPU_ISA=$isa ONEDNN_MAX_CPU_ISA=$onednn OPENBLAS_CORETYPE=$openblas
exec "$@"
