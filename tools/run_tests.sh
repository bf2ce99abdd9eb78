#!/usr/bin/env bash
# The test command of the README (and of CI): installs what is missing, builds, runs
# every test with ctest (tests that need a GPU skip with a reason when none is usable),
# then the emulator's sanitized passes: AddressSanitizer over every emulated
# configuration, ThreadSanitizer at two block sizes on the small check shapes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
ctest --test-dir "${WB_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
bash tools/emu_sanitized.sh address
bash tools/emu_sanitized.sh thread --block-sizes 32,128 --shapes tiny,odd
