#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
#   scripts/test.sh --sanitize [CTEST ARGS]  builds with the address and
#   undefined-behaviour sanitizers (WAFERSIM_SANITIZE=ON) in build-sanitize/ and
#   runs the suite there; any undefined behaviour fails the test that hit it.
# Other arguments go to ctest, e.g. scripts/test.sh --sanitize -E backend.
set -euo pipefail
if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  wafersim_build_folder="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-sanitize"
  wafersim_cmake_options=(-DWAFERSIM_SANITIZE=ON)
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
fi
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

ctest --test-dir "$WAFERSIM_BUILD" --output-on-failure -j"$(nproc)" "$@"
