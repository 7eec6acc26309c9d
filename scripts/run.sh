#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default experiment: Llama 3.1
# 8B decoding on a full WSE-3, every tile simulated.
# Extra arguments go to wafersim run, e.g. scripts/run.sh --set hardware.fabric.hop_latency_cycles=2
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

exec "$WAFERSIM_BUILD/sim/wafersim" run "$WAFERSIM_ROOT/workloads/experiments/quickstart.yaml" "$@"
