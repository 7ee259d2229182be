#!/usr/bin/env bash
# System identification of the Panda from MuJoCo recordings (examples/sysid/README.md):
# builds record_panda against MuJoCo (libmujoco-dev), records the perturbed arm at each noise
# level and seed, fits it with `steer run` on examples/sysid/panda_sysid.json, and prints the
# table (summarize.py). Usage: BUILD_DIR=build bash examples/sysid/run_sysid.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="${1:-$root/build/sysid}"
steer="$build/steer"
[ -x "$steer" ] || { echo "run_sysid: no steer CLI at $steer (set BUILD_DIR)" >&2; exit 2; }
mkdir -p "$out"
recorder="$out/record_panda"
g++ -O2 -std=c++17 "$here/record_panda.cpp" -lmujoco -o "$recorder"
run_one() {  # noise seed
  local dir="$out/noise-$1-seed-$2"
  rm -rf "$dir"
  mkdir -p "$dir/recorded"
  "$recorder" "$root/configs/mjcf/panda.xml" "$dir/recorded" --steps 750 --noise "$1" --seed "$2"
  mv "$dir/recorded/truth.json" "$dir/truth.json"
  # the example's config with its relative paths resolved from the run folder
  python3 - "$here/panda_sysid.json" "$dir/config.json" "$root" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["model"]["include"] = sys.argv[3] + "/configs/models/panda_arm.json"
c["output"]["dir"] = "runs"
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
  (cd "$dir" && "$steer" run config.json > steer.log 2>&1) || { echo "steer run failed in $dir:" >&2; tail -5 "$dir/steer.log" >&2; exit 1; }
}
run_one 0 1
for noise in 1e-4 3e-4 1e-3 3e-3; do
  for seed in 1 2 3; do run_one "$noise" "$seed"; done
done
python3 "$here/summarize.py" "$out" --detail
