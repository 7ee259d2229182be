#!/usr/bin/env bash
# One-step set-up on a fresh Debian 12 machine, then either the default experiment or the
# whole test suite:
#   bash tools/bootstrap.sh run    # install, configure, build, run configs/projectile.json
#   bash tools/bootstrap.sh test   # install, configure, build, run every test (ctest)
# Environment: BUILD_DIR (default build), STEER_CMAKE_ARGS (extra CMake flags),
# JOBS (parallel build jobs, default nproc).
set -euo pipefail
mode=${1:-}
if [[ "$mode" != "run" && "$mode" != "test" ]]; then
  echo "usage: bash tools/bootstrap.sh run|test" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

# build dependencies from Debian's packages; only the missing ones are installed
pkgs=(cmake make g++ libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev liblbfgspp-dev libmujoco-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "steer: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# the CUDA toolkit, when present, is usually outside PATH; CMake then builds the CUDA backend
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

mkdir -p "$build"
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${STEER_CMAKE_ARGS:-} >"$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  exit 1
fi
grep -E "^-- steer:" "$build/configure.log" || true
cmake --build "$build" -j "$jobs"

if [[ "$mode" == "run" ]]; then
  "$build/steer" run configs/projectile.json
  echo "steer: the artifact folder is listed above (runs/<name>-<UTC time>/artifact.json, trajectory.csv)"
else
  ctest --test-dir "$build" --output-on-failure -j "$jobs"
fi
