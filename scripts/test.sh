#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
#   scripts/test.sh --sanitize [CTEST ARGS]  builds with the address and
#   undefined-behaviour sanitizers (WAFERSIM_SANITIZE=ON) in build-sanitize/ and
#   runs the suite there; any undefined behaviour fails the test that hit it.
#   scripts/test.sh --under-load[=N] [CTEST ARGS]  runs the suite while N busy
#   loops (default: one per core, nproc) keep every core busy, as a machine
#   running other jobs would; they start after the build and are killed when
#   the script ends, however it ends. No test may depend on the machine's
#   speed: a test that passes alone and fails here has a wall-clock bound to
#   remove. -R 'sweep|signal|slurm|python_test_signals' loads only the tests
#   that start, signal or wait for processes.
# The two combine (--sanitize --under-load). Other arguments go to ctest, e.g.
# scripts/test.sh --sanitize -E backend.
set -euo pipefail
wafersim_busy_loops=0
while (( $# > 0 )); do
  case "$1" in
    --sanitize)
      wafersim_build_folder="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-sanitize"
      wafersim_cmake_options=(-DWAFERSIM_SANITIZE=ON)
      export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
      ;;
    --under-load) wafersim_busy_loops="$(nproc)" ;;
    --under-load=*)
      wafersim_busy_loops="${1#--under-load=}"
      if ! [[ "$wafersim_busy_loops" =~ ^[1-9][0-9]*$ ]]; then
        echo "error: --under-load=N needs a number of busy loops >= 1, got '$wafersim_busy_loops'" >&2
        exit 2
      fi
      ;;
    *) break ;;
  esac
  shift
done
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

busy_pids=()
stop_busy_loops() {
  if (( ${#busy_pids[@]} > 0 )); then
    kill "${busy_pids[@]}" 2>/dev/null || true
    wait "${busy_pids[@]}" 2>/dev/null || true
  fi
}
trap stop_busy_loops EXIT
trap 'exit 130' INT TERM HUP
for (( i = 0; i < wafersim_busy_loops; i++ )); do
  # A shell loop that only spins: the load of a compile or a simulation on another job's core.
  ( trap - INT TERM HUP; while :; do :; done ) &
  busy_pids+=($!)
done
if (( wafersim_busy_loops > 0 )); then
  echo "under load: ${wafersim_busy_loops} busy loop(s) on $(nproc) core(s) while the tests run"
fi

ctest --test-dir "$WAFERSIM_BUILD" --output-on-failure -j"$(nproc)" "$@"
