#!/usr/bin/env bash
# The test command of the README (and of CI): installs what is missing, builds, runs
# every test with ctest (tests that need a GPU skip with a reason when none is usable),
# then the sanitized passes: AddressSanitizer + UBSan over every emulated configuration
# and over the CPU side of the tests (one build-address serves both), ThreadSanitizer
# at two block sizes on the small check shapes, and the fuzz targets of the file and
# text readers, 30 s each.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
ctest --test-dir "${WB_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
bash tools/emu_sanitized.sh address
bash tools/sanitized_tests.sh
bash tools/emu_sanitized.sh thread --block-sizes 32,128 --shapes tiny,odd
bash tools/fuzz.sh 30
