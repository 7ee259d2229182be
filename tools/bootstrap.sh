#!/usr/bin/env bash
# One-step set-up on a fresh Debian 12 machine, then either the default experiment or the
# whole test suite:
#   bash tools/bootstrap.sh run    # install, configure, build the CLI only, run configs/projectile.json
#   bash tools/bootstrap.sh test   # install, configure, build everything, run every test (ctest)
# run builds only what it runs: the CLI, without tests or benchmarks, and the CUDA backend only
# where a GPU is present (for that GPU). test builds everything; with nvcc and no GPU the CUDA
# kernels are compiled for one architecture (sm_90) so that they keep compiling, and their
# tests skip.
# Environment: BUILD_DIR (default build), STEER_CMAKE_ARGS (extra CMake flags),
# JOBS (parallel build jobs, default nproc), STEER_DEPS_DIR (where MuJoCo is unpacked, default
# .deps; kept across rebuilds, so that a second run downloads nothing).
set -euo pipefail
mode=${1:-}
if [[ "$mode" != "run" && "$mode" != "test" ]]; then
  echo "usage: bash tools/bootstrap.sh run|test" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# wall time per phase, printed last (also when a phase fails), so that a CI log's tail says where
# its time went
phase_times=()
phase_start=$SECONDS
phase_done() {
  phase_times+=("$1 $((SECONDS - phase_start)) s")
  phase_start=$SECONDS
}
trap '((${#phase_times[@]})) && echo "steer: bootstrap phases: $(printf "%s; " "${phase_times[@]}")total ${SECONDS} s" >&2' EXIT
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

# build dependencies from Debian's packages; only the missing ones are installed. python3 and
# python3-venv give a pip for MuJoCo (below). The tests add GoogleTest, Open MPI
# (runs split across ranks, docs/scaling.md), qemu-user (the portability check), python3 (the
# malformed-config corpus), clang (the config fuzzer, libFuzzer) and chromium (report.html
# in a headless browser, docs/report.md); clang-format checks the sources' formatting in CI
# (tools/check_format.sh).
pkgs=(cmake make g++ libeigen3-dev nlohmann-json3-dev libcli11-dev liblbfgspp-dev python3 python3-venv)
[[ "$mode" == "test" ]] && pkgs+=(libgtest-dev libgmock-dev qemu-user python3 clang clang-format chromium libopenmpi-dev openmpi-bin)
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

# the Python module's tests (tests/python, docs/python.md): Debian's numpy, scipy, pytest and
# CPU-only torch (python3-torch, about 230 MB installed with libtorch, where PyPI's default torch wheel
# brings several GB of CUDA libraries), without recommends (libtorch-dev and its build tools)
if [[ "$mode" == "test" ]]; then
  py_missing=()
  for p in python3-dev python3-venv python3-numpy python3-scipy python3-pytest python3-torch; do
    dpkg -s "$p" >/dev/null 2>&1 || py_missing+=("$p")
  done
  if ((${#py_missing[@]})); then
    echo "steer: installing ${py_missing[*]}" >&2
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    ((${#missing[@]})) || $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${py_missing[@]}" >/dev/null ||
      echo "steer: could not install ${py_missing[*]}: the Python tests that need them will be skipped" >&2
  fi
fi

phase_done packages
# MuJoCo's compiler imports MJCF and URDF models (docs/import.md): MuJoCo 4.0.1 from PyPI's
# mujoco-core wheel (tools/fetch_mujoco.sh: libmujoco and its headers, unpacked, not installed).
# Without PyPI, Debian's libmujoco-dev where its version is 3.3 or newer (Debian 12's is 2.2.2,
# too old); else steer builds without the import, and model.mjcf / model.urdf are refused,
# saying why.
mujoco_args=()
if mujoco_root=$(bash tools/fetch_mujoco.sh); then
  mujoco_args=("-DSTEER_MUJOCO_ROOT=$mujoco_root")
else
  deb_v=$(apt-cache policy libmujoco-dev 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [[ -n "$deb_v" && "$deb_v" != "(none)" ]] && dpkg --compare-versions "$deb_v" ge 3.3; then
    echo "steer: MuJoCo from Debian's libmujoco-dev $deb_v instead" >&2
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libmujoco-dev >/dev/null ||
      echo "steer: could not install libmujoco-dev: building without the MJCF/URDF import" >&2
  else
    echo "steer: no MuJoCo >= 3.3 (Debian's libmujoco-dev is ${deb_v:-absent}): building without the MJCF/URDF import" >&2
  fi
fi

# the CUDA toolkit, when present, is usually outside PATH
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then
  have_gpu=1
fi

if [[ "$mode" == "run" ]]; then
  cuda=AUTO
  ((have_gpu)) || cuda=OFF
  cmake_args=(-DSTEER_BUILD_TESTS=OFF -DSTEER_BUILD_BENCH=OFF -DSTEER_CUDA=$cuda)
  targets=(--target steer_cli)
else
  # warnings are errors here (STEER_WERROR): the suite is what CI runs. run leaves them
  # warnings, so that a newer compiler's new ones never stop a first build.
  cmake_args=(-DSTEER_BUILD_TESTS=ON -DSTEER_BUILD_BENCH=ON -DSTEER_CUDA=AUTO -DSTEER_WERROR=ON)
  targets=()
fi

mkdir -p "$build"
# the Python module (python/, STEER_BUILD_PYTHON) in the test build, when a venv of Debian's python3
# (/usr/bin/python3, which its python3-* packages are built for; not a python3 earlier in PATH) that sees Debian's
# packages gets nanobind and scikit-build-core from PyPI; otherwise its tests say why they skip
if [[ "$mode" == "test" ]]; then
  pyenv="$root/$build/pyenv"
  [[ "$build" = /* ]] && pyenv="$build/pyenv"
  if { [[ -x "$pyenv/bin/python" ]] || /usr/bin/python3 -m venv --system-site-packages "$pyenv" >/dev/null 2>&1; } &&
     { "$pyenv/bin/python" -c "import nanobind, scikit_build_core" 2>/dev/null ||
       "$pyenv/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 1 "nanobind>=2" "scikit-build-core>=0.10" >"$build/pip.log" 2>&1; } &&
     "$pyenv/bin/python" -c "import os, sys, sysconfig; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"; then
    cmake_args+=(-DSTEER_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$pyenv/bin/python")
    # jax's CPU build for the DLPack input tests (tests/python/test_inputs.py), pinned so that pip
    # keeps Debian's numpy and scipy (python3-torch is built against them); without it those
    # tests skip, saying so
    if ! "$pyenv/bin/python" -c "import jax" 2>/dev/null; then
      np_v=$("$pyenv/bin/python" -c "import numpy; print(numpy.__version__)" 2>/dev/null || echo 0)
      sp_v=$("$pyenv/bin/python" -c "import scipy; print(scipy.__version__)" 2>/dev/null || echo 0)
      "$pyenv/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 1 "jax==0.4.30" "jaxlib==0.4.30" \
        "numpy==$np_v" "scipy==$sp_v" >>"$build/pip.log" 2>&1 ||
        echo "steer: could not install jax (see $build/pip.log): its tests will be skipped" >&2
    fi
  else
    echo "steer: no venv with nanobind and Python's headers (PyPI unreachable? see $build/pip.log): the Python tests will be skipped" >&2
    cmake_args+=(-DSTEER_BUILD_PYTHON=OFF)
  fi
fi
phase_done "MuJoCo and Python deps"
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" "${mujoco_args[@]}" ${STEER_CMAKE_ARGS:-} >"$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  exit 1
fi
grep -E "^-- steer:" "$build/configure.log" || true
phase_done configure
cmake --build "$build" -j "$jobs" "${targets[@]}"
phase_done build

if [[ "$mode" == "run" ]]; then
  "$build/steer" run configs/projectile.json
  echo "steer: the artifact folder is listed above (runs/<name>-<UTC time>/artifact.json, trajectory.csv, report.html)"
else
  ctest_rc=0
  ctest --test-dir "$build" --output-on-failure -j "$jobs" || ctest_rc=$?
  phase_done tests
  exit $ctest_rc
fi
