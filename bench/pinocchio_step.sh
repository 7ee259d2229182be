#!/usr/bin/env bash
# steer's step and VJP against Pinocchio's ABA and ABA derivatives in C++, one thread
# (bench/pinocchio_step.cpp; the figures go to bench/RESULTS.md, "Pinocchio"):
#   BUILD_DIR=<build dir> bash bench/pinocchio_step.sh OUTDIR
# Installs PyPI's `pin` (Pinocchio's wheel: its headers and libraries under cmeel.prefix) into a
# venv under the build folder, serializes the model Pinocchio's MJCF parser builds from
# configs/mjcf/panda.xml, configures the build with STEER_PINOCCHIO_PREFIX, builds the two
# benchmark programs (Pinocchio from its headers with steer's flags; Pinocchio's prebuilt library)
# and runs both. Exits 77 where the venv or pip fails (PyPI unreachable).
set -euo pipefail
out=${1:?usage: BUILD_DIR=<build dir> bash bench/pinocchio_step.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mkdir -p "$out"
venv="$build/crosscheck/pinocchio-venv"
if ! "$venv/bin/python" -c "import pinocchio" 2>/dev/null; then
  /usr/bin/python3 -m venv "$venv" || { echo "pinocchio_step.sh: SKIP: cannot make a venv" >&2; exit 77; }
  "$venv/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 1 "pin==4.1.0" numpy ||
    { echo "pinocchio_step.sh: SKIP: pip could not install pin" >&2; exit 77; }
fi
prefix=$("$venv/bin/python" -c "import cmeel; print(cmeel.__path__[0] + '.prefix')" 2>/dev/null ||
         "$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'] + '/cmeel.prefix')")
"$venv/bin/python" -c "
import pinocchio as pin, sys
pin.buildModelFromMJCF(sys.argv[1]).saveToBinary(sys.argv[2])" "$root/configs/mjcf/panda.xml" "$out/panda_pinocchio.bin"
cmake -S "$root" -B "$build" "-DSTEER_PINOCCHIO_PREFIX=$prefix" >/dev/null
cmake --build "$build" --target bench_pinocchio bench_pinocchio_library
for exe in bench_pinocchio bench_pinocchio_library; do
  "$build/bench/$exe" --config "$root/bench/configs/pinocchio_panda.json" \
    --pinocchio-model "$out/panda_pinocchio.bin" | tee "$out/$exe.json"
done
