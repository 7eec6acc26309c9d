#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default experiment.
# Extra arguments go to wafersim, e.g. scripts/run.sh --set hardware.fabric.hop_latency_cycles=2
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

experiment="$WAFERSIM_ROOT/workloads/experiments/quickstart.yaml"
default_command=(validate "$experiment" --print)

if [[ ! -f "$experiment" ]]; then
  echo "No default experiment yet ($experiment); the hardware presets:"
  exec "$WAFERSIM_BUILD/sim/wafersim" describe hardware
fi
exec "$WAFERSIM_BUILD/sim/wafersim" "${default_command[@]}" "$@"
