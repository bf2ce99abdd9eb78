#!/usr/bin/env bash
# The fuzz targets of tests/fuzz/ (README "Tests"), each for a bounded time.
#
#   bash ci/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30 s, every target)
#
# Builds them with clang, libFuzzer, AddressSanitizer and UBSan into build-fuzz (CPU
# only; the readers, not the variants), then runs each from its seeds in
# tests/fuzz/corpus/<target>/. What a run discovers goes to a scratch folder, never into
# the committed seeds. First the negative control (tests/fuzz/fuzz_control.cpp): each
# planted bug of tests/fuzz/control/ must be reported, the documented error must not.
# Exits 1 when a control is not as expected or a target finds a crash, a sanitizer
# report, an unexpected exception, a broken property, a timeout or a memory blow-up
# (the input is kept as build-fuzz/findings/<target>-crash-...); 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
case "$seconds" in
  '' | *[!0-9]*) echo "usage: ci/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;;
esac
[ $# -gt 0 ] && shift
all_targets=(shape report best checkpoint token_file tokenizer_file tokenizer)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [ -d "tests/fuzz/corpus/$t" ] || { echo "ci/fuzz.sh: unknown target '$t' (targets: ${all_targets[*]})" >&2; exit 2; }
done

dir="${WB_BUILD_DIR:-build}-fuzz"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DWB_FUZZ=ON >/dev/null
cmake --build "$dir" --parallel "$(nproc)" --target fuzz_control "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$dir/findings"
failed=0

# expect INPUT WANTED: the control on one planted input must report WANTED ("" = none)
expect() {
  local input=$1 wanted=$2 out rc=0
  out=$("$dir/fuzz/fuzz_control" "tests/fuzz/control/$input" 2>&1) || rc=$?
  if [ -z "$wanted" ] && [ "$rc" -eq 0 ]; then
    echo "ok   fuzz control $input: no finding"; return
  elif [ -n "$wanted" ] && [ "$rc" -ne 0 ] && grep -q "$wanted" <<<"$out"; then
    echo "ok   fuzz control $input: caught ($(grep -m1 "$wanted" <<<"$out" | cut -c1-90))"; return
  fi
  echo "FAIL fuzz control $input: expected '${wanted:-no finding}' (exit $rc)"; echo "$out" | tail -20
  failed=1
}
expect overflow "AddressSanitizer: heap-buffer-overflow"
expect shift "runtime error: shift exponent"
expect exception "deadly signal"
expect usage ""
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  log="$dir/findings/$t.log"
  # -timeout: one input may take 10 s; -rss_limit_mb: a reader may not ask for more
  # than 2 GiB (a corrupt header must be refused before it allocates).
  if "$dir/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$dir/findings/$t-" "$scratch/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    echo "ok   fuzz $t: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') inputs in ${seconds} s, no finding"
  else
    echo "FAIL fuzz $t: a finding (log $log, input $(ls -t "$dir/findings/$t-"* 2>/dev/null | grep -v '\.log$' | head -1))"
    grep -E "ERROR|SUMMARY|property broken|what\(\)|runtime error" "$log" | head -8
    failed=1
  fi
done
exit "$failed"
