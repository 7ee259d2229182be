#!/usr/bin/env bash
# steer's check on a machine with an NVIDIA GPU, in one go of about 10 minutes: builds the
# committed tree for sm_90 with the CUDA backend, the cuda-labelled tests and the Python module;
# runs those tests, the Python device tests (torch CUDA tensors, where the machine has torch),
# the kernel budget (tools/kernel_budget.py on the build's ptxas reports) and bench/gpu.sh with
# what is left of a 560 s budget, then bench/roofline.py's H200 prediction against that measurement
# (prediction_vs_measured.md). Everything lands in $OUT as a few logs and one tarball (gpu.tgz:
# bench/gpu.sh's tables and JSON).
# The GPU machine needs no network: prepare on a machine that has one, from the repository root:
#   mkdir -p .device/debs && echo /.device/ >> .git/info/exclude       (once)
#   (cd .device/debs && apt-get download libeigen3-dev nlohmann-json3-dev libgtest-dev libgmock-dev \
#      libcli11-dev liblbfgspp-dev)
#   bash tools/fetch_mujoco.sh .device/mujoco    # MuJoCo 4.0.1 from PyPI, unpacked (docs/import.md)
#   cp tools/device_check.sh .device/ && git archive HEAD -o .device/src.tar
# copy the repository with .device/ to the GPU machine and run `bash .device/device_check.sh`
# there (OUT=folder for the results). The Debian packages are unpacked there, never installed;
# MuJoCo is used from .device/mujoco (the programs' RPATH names it).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$SECONDS
# the committed tree (.device/src.tar, git archive HEAD), apart from edits in progress here
if [ -f .device/src.tar ]; then
  mkdir -p /tmp/src && tar xf .device/src.tar -C /tmp/src && cp -r .device /tmp/src/ && cd /tmp/src || exit 1
fi
stamp() { echo "[$((SECONDS - T0))s] $*" | tee -a "$OUT/steps.txt"; }
deps=/tmp/steer-deps; mkdir -p "$deps"
for f in .device/debs/*.deb; do dpkg -x "$f" "$deps"; done
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee -a "$OUT/steps.txt"
nproc | tee -a "$OUT/steps.txt"
py=$(command -v python3)
b=/tmp/build
configure() {
  cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$deps/usr;$deps/usr/share;$deps/usr/lib/x86_64-linux-gnu/cmake" \
    -DSTEER_MUJOCO_ROOT="$PWD/.device/mujoco" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DSTEER_CUDA=ON -DSTEER_BUILD_TESTS=ON -DSTEER_BUILD_BENCH=ON \
    -DPython_EXECUTABLE="$py" "$@" >> "$OUT/build.log" 2>&1
}
stamp configure
configure -DSTEER_BUILD_PYTHON=ON || { stamp "configure with Python failed; without"; configure -DSTEER_BUILD_PYTHON=OFF; }
grep -E "steer:|CUDA" "$OUT/build.log" | head -20 >> "$OUT/steps.txt"
targets="steer_cli bench_rollout cuda_parity_test cuda_parity_articulated_test rigid_contact_cuda_test free_base_legged_cuda_test"
grep -q "STEER_BUILD_PYTHON:BOOL=ON" $b/CMakeCache.txt && targets="$targets steer_python"
stamp "build $targets"
cmake --build $b -j 16 --target $targets -- -k 0 >> "$OUT/build.log" 2>&1 || stamp "BUILD FAILED (see build_tail.log)"
stamp "kernel budget"
"$py" tools/kernel_budget.py --logs $b/kernel_budget --markdown "$OUT/kernel_budget.md" --json "$OUT/kernel_budget.json" \
  > "$OUT/kernel_budget.log" 2>&1
stamp "kernel budget rc $?: $(tail -1 "$OUT/kernel_budget.log")"
stamp "ctest -L cuda"
(cd $b && ctest -L cuda -j 8 --output-on-failure > "$OUT/test.log" 2>&1)
stamp "ctest rc $?: $(grep -E 'tests passed|tests failed' "$OUT/test.log")"
grep -c "Skipped" "$OUT/test.log" | sed 's/^/skipped: /' >> "$OUT/steps.txt"
if [ -d $b/python/steer ]; then
  stamp pytest
  (cd tests/python && PYTHONPATH=$b/python STEER_SOURCE_DIR=$PWD/../.. STEER_BINARY=$b/steer PYTHONDONTWRITEBYTECODE=1 \
    timeout 120 "$py" -m pytest -q -p no:cacheprovider -rs test_inputs.py test_api.py test_torch.py > "$OUT/pytest.log" 2>&1)
  stamp "pytest rc $?: $(tail -1 "$OUT/pytest.log")"
fi
mkdir -p /tmp/gpu
stamp "bench/gpu.sh"
left=$((560 - (SECONDS - T0))); ((left < 60)) && left=60
BUILD_DIR=$b GPU_BENCH_SECONDS=$left bash bench/gpu.sh /tmp/gpu > /tmp/gpu/bench.log 2>&1
stamp "bench done"
# the H200 prediction (bench/h200_prediction.json, bench/roofline.py) against what gpu.sh measured
"$py" bench/roofline.py --compare /tmp/gpu > "$OUT/prediction_vs_measured.md" 2>&1
stamp "prediction vs measurement rc $?"
tar czf "$OUT/gpu.tgz" -C /tmp gpu
tail -c 20000 "$OUT/build.log" > "$OUT/build_tail.log"; rm -f "$OUT/build.log"
stamp end
