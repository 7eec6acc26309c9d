#!/usr/bin/env bash
# Installs what is missing, builds, puts `wafersim` on PATH (a symlink, said
# when made) and runs the default experiment: Llama 3.1 8B decoding on a full
# WSE-3, every tile simulated.
# Extra arguments go to wafersim run, e.g. scripts/run.sh --set hardware.fabric.hop_latency_cycles=2
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

# /usr/local/bin as root, else ~/.local/bin; a program there that is not our
# symlink (an installed wafersim) is left alone.
link_folder=/usr/local/bin
[[ "$(id -u)" == 0 ]] || link_folder="$HOME/.local/bin"
link="$link_folder/wafersim"
if [[ -L "$link" || ! -e "$link" ]] && mkdir -p "$link_folder" 2>/dev/null &&
   ln -sfn "$WAFERSIM_BUILD/sim/wafersim" "$link" 2>/dev/null; then
  echo "wafersim is $link -> $WAFERSIM_BUILD/sim/wafersim$(
    [[ ":$PATH:" == *":$link_folder:"* ]] || echo " (add $link_folder to PATH)")"
else
  echo "wafersim is $WAFERSIM_BUILD/sim/wafersim (left $link as it is)"
fi

exec "$WAFERSIM_BUILD/sim/wafersim" run "$WAFERSIM_ROOT/workloads/experiments/quickstart.yaml" "$@"
