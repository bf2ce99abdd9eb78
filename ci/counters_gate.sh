#!/usr/bin/env bash
# The counters gate (ctest counters_gate_emu): every hand-written CUDA variant emulated
# at the tiny check shapes with the emulator's counters (docs/counters.md), compared by
# `wb compare` with the committed baseline results/emu/counters.json. Counts have no
# noise, so the gate is exact: a change that uncoalesces a load, adds bank conflicts or
# lowers a kernel's theoretical occupancy fails, naming the site. A change that means to
# alter the counters regenerates the baseline with the command below (docs/counters.md)
# and commits it with the change.
#
# The counts depend on the host compiler's code for the emulated kernels (which accesses
# GCC merges or keeps in registers): with another compiler than the baseline's, the gate
# skips (77) and says so instead of failing on the compiler's choices. So does a build
# whose emulator cannot count (the sanitized flavours).
set -euo pipefail
wb=${1:?usage: ci/counters_gate.sh PATH_TO_WB}
root="$(cd "$(dirname "$0")/.." && pwd)"
baseline="$root/results/emu/counters.json"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if ! "$wb" check residual_forward --backend emu --variants 1 --shapes tiny --counters >"$out/probe.txt" 2>&1; then
  if grep -q "counting needs the plain build" "$out/probe.txt"; then
    echo "skipped: this wb's emulator cannot count ($(grep -o 'this emulator is the [a-z]* sanitizer build' "$out/probe.txt"))"
    exit 77
  fi
  cat "$out/probe.txt"
  exit 1
fi

"$wb" check --all --backend emu --counters --shapes tiny --seed 1 --json "$out/counters.json" >"$out/check.txt" 2>&1 ||
  { tail -40 "$out/check.txt"; exit 1; }

# The compiler of the baseline's build against this one's.
read -r base_cxx now_cxx < <(/usr/bin/python3 - "$baseline" "$out/counters.json" <<'PY'
import json, sys
def cxx(path):
    b = json.load(open(path))["context"]["build"]
    return (b["cxx_compiler"] + b["cxx_flags"]).replace(" ", "_")
print(cxx(sys.argv[1]), cxx(sys.argv[2]))
PY
)
if [ "$base_cxx" != "$now_cxx" ]; then
  echo "skipped: the baseline's counts come from ${base_cxx//_/ }, this build's from ${now_cxx//_/ };"
  echo "regenerate it with: wb check --all --backend emu --counters --shapes tiny --seed 1 --json results/emu/counters.json"
  exit 77
fi
"$wb" compare "$baseline" "$out/counters.json" >"$out/compare.txt" 2>&1 && status=0 || status=$?
grep -v '^SAME ' "$out/compare.txt" | grep -v '^verdict ' || true
exit "$status"
