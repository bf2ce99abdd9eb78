#!/usr/bin/env bash
# The emulator's sanitized checks (README "Running CUDA kernels without a GPU").
#
#   bash ci/emu_sanitized.sh address|thread [wb check options...]
#
# Builds wb with the sanitizer, then
#   1. runs the planted bugs of tests/emu/sanitized_controls.cpp: each must be reported
#      by the sanitizer (address: reads past a shared array or a device buffer; thread:
#      shared and global write races, the latter also after a barrier in each block, a
#      missing barrier, one in an mma.sync pipeline, a pipeline's refill issued before
#      the barrier),
#      the emulator's synccheck faults by the emulator with no sanitizer report, and
#      the clean run must not report anything;
#   2. runs `wb check --all --backend emu` (plus the options given, e.g. --block-sizes
#      32,128 for the slower thread flavour): every hand-written CUDA variant must pass
#      with no sanitizer report (the first report aborts the run);
#   3. checks the attention ops at flash_small, every configuration (below).
# Exits 0 when all of that holds, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${1:-}"
case "$flavour" in
  address | thread) shift ;;
  *) echo "usage: ci/emu_sanitized.sh address|thread [wb check options...]" >&2; exit 2 ;;
esac
# No Triton rungs in either: under the interpreter they run in Python, which no sanitizer
# sees (ctest's check_all_emu checks them in the plain build).
if [ "$flavour" = address ]; then
  # The address flavour builds on the plain build (tools/build.sh's folder, configured
  # here if it is not yet): only the emulator and the emulated variants are compiled
  # again, instrumented, into wb_address (workbench/CMakeLists.txt). The rest of wb, the
  # CPU reference included, is the plain build's: the test suite under ASan
  # (ci/sanitized_tests.sh) instruments all of it in a build of its own.
  dir="${WB_BUILD_DIR:-build}"
  [ -f "$dir/CMakeCache.txt" ] || cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$dir" --parallel "$(nproc)" --target wb_address sanitized_controls_address
  wb="$dir/wb_address" controls="$dir/sanitized_controls_address"
  # A plain kernel would bring its ThreadSanitizer hooks (emu/tsan_hooks.cpp): none may.
  # (grep reads all of nm's output: with -q, nm could die of SIGPIPE and, under
  # pipefail, turn a match into a failed condition.)
  if nm "$wb" | grep ' T __tsan_read4$' >/dev/null; then
    echo "FAIL address: $wb holds the plain build's emulated kernels (emu/tsan_hooks.cpp), not only the address copy's"
    exit 1
  fi
else
  dir="${WB_BUILD_DIR:-build}-$flavour"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_SANITIZE="$flavour" -DWB_BUILD_TESTS=OFF \
    -DWB_TRITON=OFF >/dev/null
  cmake --build "$dir" --parallel "$(nproc)" --target wb sanitized_controls
  wb="$dir/wb" controls="$dir/sanitized_controls"
fi

# The CPU reference's OpenMP and OpenBLAS threads are not instrumented: one thread each.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0"
export ASAN_OPTIONS="halt_on_error=1 exitcode=66 detect_leaks=0"
export UBSAN_OPTIONS="halt_on_error=1 exitcode=66 print_stacktrace=1"

failed=0
# expect SCENARIO WANTED: the control's output must hold WANTED ("" = no report, exit 0)
# and, for the emulator's own faults (WANTED starting "launch failed"), no sanitizer
# report.
expect() {
  local scenario=$1 wanted=$2 out rc=0
  out=$("$controls" "$scenario" 2>&1) || rc=$?
  if [[ "$wanted" == "launch failed"* ]] && grep -q "Sanitizer" <<<"$out"; then
    echo "FAIL $flavour control $scenario: a sanitizer report instead of the emulator's fault"; echo "$out" | head -30
    failed=1
    return
  fi
  if [ -z "$wanted" ]; then
    if [ "$rc" -eq 0 ]; then echo "ok   $flavour control $scenario: no report"; return; fi
    echo "FAIL $flavour control $scenario: a report where none is due (exit $rc)"; echo "$out" | head -30
  elif [ "$rc" -ne 0 ] && grep -q "$wanted" <<<"$out"; then
    echo "ok   $flavour control $scenario: caught ($(grep -m1 "$wanted" <<<"$out" | cut -c1-100))"; return
  else
    echo "FAIL $flavour control $scenario: '$wanted' not reported (exit $rc)"; echo "$out" | head -30
  fi
  failed=1
}

if [ "$flavour" = thread ]; then
  expect shared_race "ThreadSanitizer: data race.*shared_write_race"
  expect missing_barrier "ThreadSanitizer: data race.*block_sum"
  expect global_race "ThreadSanitizer: data race.*global_write_race"
  # A __syncthreads orders its own block's threads only: still a race across blocks.
  expect global_race_after_barrier "ThreadSanitizer: data race.*global_write_race_after_barrier"
  # The race is between the cp.async landing (at the wait) and the ldmatrix read, both
  # in emu/tensor_core_instructions.h, inlined into the planted kernel.
  expect mma_missing_barrier "ThreadSanitizer: data race.*tensor_core"
  # A refill issued before the barrier: the other warp's ldmatrix read, then this
  # warp's cp.async landing in the same stage.
  expect mma_refill_before_barrier "ThreadSanitizer: data race.*tensor_core"
else
  expect shared_overread "index 64 out of bounds for type 'float \[64\]'"
  expect global_overread "AddressSanitizer: heap-buffer-overflow"
fi
expect synccheck_barrier "launch failed: .*synccheck: kernel divergent_barrier"
expect synccheck_exited "launch failed: .*synccheck: kernel shuffle_with_exited_lanes"
expect clean ""

start=$(date +%s)
if "$wb" check --all --backend emu "$@"; then
  echo "ok   $flavour: wb check --all --backend emu $* passed with no sanitizer report in $(( $(date +%s) - start )) s"
else
  echo "FAIL $flavour: wb check --all --backend emu $* (exit $?)"
  failed=1
fi

# The attention rungs at a shape where their pipelines refill and blocks share rows
# (flash_small: head size 32, T = 40, two key tiles of 32, so that with dq_atomics=1 two
# blocks add into the same dQ rows), at block sizes 32 and 128 with every other launch
# parameter (every tile, stage count and dq_atomics form): the shapes of the pass above
# give them one key tile at most (ragged8's head size, 68, is past what the
# FlashAttention-2 rungs hold), nor a head size that is a multiple of 8 (what the cuDNN
# SDPA rungs require; the four ops here hold all three). Four ops at one small shape,
# not every op at it, to keep the pass's cost (tests/workbench/test_emulated_coverage.cpp
# reads these two lines).
attention_ops="attention_forward attention_forward_bf16 attention_backward_bf16 attention_backward"
attention_shape=flash_small
for op in $attention_ops; do
  start=$(date +%s)
  if "$wb" check "$op" --backend emu --shapes "$attention_shape" --block-sizes 32,128; then
    echo "ok   $flavour: wb check $op --backend emu --shapes $attention_shape --block-sizes 32,128 passed with no sanitizer report in $(( $(date +%s) - start )) s"
  else
    echo "FAIL $flavour: wb check $op --backend emu --shapes $attention_shape --block-sizes 32,128 (exit $?)"
    failed=1
  fi
done
exit "$failed"
