#!/usr/bin/env bash
# Shared by run.sh and test.sh (sourced): installs the Debian packages that are
# missing, then configures and builds build/ (Release). Works from any folder,
# as root on a fresh Debian 12, and does nothing to apt when all is installed.
set -euo pipefail

WAFERSIM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A caller may set wafersim_build_folder and wafersim_cmake_options before
# sourcing this (test.sh --sanitize builds in its own folder).
WAFERSIM_BUILD="${wafersim_build_folder:-$WAFERSIM_ROOT/build}"

wafersim_packages=(g++ cmake make pkg-config libsystemc-dev libeigen3-dev libfmt-dev catch2
                   libyaml-cpp-dev libcli11-dev nlohmann-json3-dev python3-matplotlib python3-numpy python3-pandas python3-pip python3-yaml
                   pybind11-dev python3-dev slurm-wlm munge clang-format chromium)

missing_packages=()
for package in "${wafersim_packages[@]}"; do
  # dpkg -s also succeeds for a removed package whose configuration is left: check the status.
  if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing_packages+=("$package")
  fi
done

if (( ${#missing_packages[@]} > 0 )); then
  as_root=()
  if [[ "$(id -u)" != 0 ]]; then as_root=(sudo); fi
  echo "Installing missing packages: ${missing_packages[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing_packages[@]}"
fi

cmake -S "$WAFERSIM_ROOT" -B "$WAFERSIM_BUILD" -DCMAKE_BUILD_TYPE=Release \
  ${wafersim_cmake_options[@]+"${wafersim_cmake_options[@]}"}
cmake --build "$WAFERSIM_BUILD" -j"$(nproc)"
