#!/usr/bin/env bash
# ctest under AddressSanitizer + UBSan (README "Tests"): the CPU side of every test,
# in a build instrumented whole (build-address, no CUDA), configured here with the
# tests. The first sanitizer report fails its test.
#
#   bash ci/sanitized_tests.sh [ctest options...]
#
# Left out, each for its reason:
#   check_all_emu, check_all_emu_large
#                        ci/emu_sanitized.sh address runs the emulated variants instrumented
#                        (small shapes), on the plain build's address copy of the emulator
#   check_all_cpu        run after ctest below at the small check shapes (tiny, odd: the
#                        edges of every tiling), as the emulated variants are: at every shape
#                        it is minutes instrumented, and the uninstrumented ctest runs it
#                        at every shape
#   trainer_parity.*     PyTorch and the trainer for minutes each, far too slow instrumented
#   reference_pytorch.*  PyTorch per op: the instrumented part (wb dump) is small, the cost
#                        is Python's; wb's dump and reference code run in wb_tests too
#   python_env           the Python venv alone (torch, triton): no wb code to instrument
#   DeviceLost.*, Isolate.*, Pipeline.RecordsFollowThePlanAndALostDeviceLeavesTheRestNotRun,
#   emu.EmuChecks.OffByOneGlobalWrite*, emu.EmuChecks.SharedOverflow*,
#   emu.EmuChecks.WriteJustPastTheCanary*, emu.EmuChecks.OutOfBoundsReadReadsNaN,
#   emu.Wmma.StorePastTheEndIsAMemcheckFault
#                        planted out-of-bounds accesses and crashes, there to show that the
#                        plain emulator's canaries and --isolate catch them: AddressSanitizer
#                        stops the process at the access first (ci/emu_sanitized.sh address
#                        shows it catching such planted bugs)
#   Files.TheTrainerRefusesAHugeHeaderWithoutAllocating, Files.OutOfMemoryIsExitTwoWithAMessage
#                        run under `ulimit -v`, where AddressSanitizer cannot map its shadow
#                        memory and the process cannot start
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${WB_BUILD_DIR:-build}-address"
# No Triton rungs: under the interpreter they run in Python, which no sanitizer sees.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_SANITIZE=address -DWB_BUILD_TESTS=ON \
  -DWB_TRITON=OFF >/dev/null
cmake --build "$dir" --parallel "$(nproc)"

export ASAN_OPTIONS="halt_on_error=1 detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
start=$(date +%s)
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" \
  -E '^(check_all_emu|check_all_emu_large|counters_gate_emu|check_all_cpu|check_torch_cpu|triton_.*|device_rehearsal|trainer_parity\..*|reference_pytorch\..*|python_env|DeviceLost\..*|Isolate\..*|Pipeline\.RecordsFollowThePlanAndALostDeviceLeavesTheRestNotRun|emu\.EmuChecks\.OffByOneGlobalWrite.*|emu\.EmuChecks\.SharedOverflow.*|emu\.EmuChecks\.WriteJustPastTheCanary.*|emu\.EmuChecks\.OutOfBoundsReadReadsNaN|emu\.Wmma\.StorePastTheEndIsAMemcheckFault|Files\.TheTrainerRefusesAHugeHeaderWithoutAllocating|Files\.OutOfMemoryIsExitTwoWithAMessage)$' "$@"
echo "ok   sanitized ctest passed in $(( $(date +%s) - start )) s"
start=$(date +%s)
"$dir/wb" check --all --backend cpu --shapes tiny,odd --variants no-torch
echo "ok   sanitized wb check --all --backend cpu --shapes tiny,odd --variants no-torch passed in $(( $(date +%s) - start )) s"
