#!/usr/bin/env bash
# The test command: install what is missing, build, run every test.
# .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
# Unit tests in parallel; the end-to-end ones are marked RUN_SERIAL.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
