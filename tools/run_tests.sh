#!/usr/bin/env bash
# The test command of the README (and of CI): installs what is missing, builds, and
# runs every test with ctest. Tests that need a GPU skip with a reason when none is
# usable.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh
ctest --test-dir "${WB_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
