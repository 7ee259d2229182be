#!/usr/bin/env bash
# Peer benchmarks on this machine's CPU, batched, each peer at its best on the same work as steer:
#   - Warp 1.9.x: its bounce scene (example_bounce.py: ground and wall) with B particles in one
#     warp.sim model, against steer's configs/warp_bounce.json at the same B (bench/peers/warp_bounce.py);
#   - Taichi 1.7: steer's Taichi port of DiffTaichi robot A at B = 64 (difftaichi_mass_spring.py),
#     against steer's configs/difftaichi_robot_a.json, and DiffTaichi's published mass_spring.py
#     (neural controller, its loss, one robot, float32; difftaichi_upstream.py) next to steer's robot A;
#   - MuJoCo: the C engine's mujoco.rollout on the Panda at 1 and 2 threads, forward only, against
#     steer's forward (mujoco_rollout_panda.py).
#
#   bash bench/peers/run_peers.sh [BUILD_DIR]        (default BUILD_DIR: build-peers)
#   env: REPEAT=2 (rounds; every case once per round, the engines interleaved)
#        MIN_TIME=1 (seconds of timed calls per figure)   OUT=folder for the JSON files
#        BATCHES="1 16 256 4096 16384" (Warp scene; steer in float32 too at the largest)   THREADS="1 2" (steer; Warp's CPU device is one thread)
#        SOFTBODY_BATCHES="64 1024" (Warp's FEM scene, bench/peers/warp_softbody.py; 1024 is warp.sim at its best)
#        VENV=/work/venv-peers (python venv with warp-lang 1.9.x, taichi 1.7.x, mujoco; created if missing)
#        DIFFTAICHI=path of a checkout of github.com/yuanming-hu/difftaichi (the published row is
#        skipped without it)   SKIP_JIT=1 skips the fresh-cache Warp compile
#
# Every figure is written with the 1-minute load average before it ($OUT/load.tsv). The peers
# are bench tools only: nothing in steer's build or tests uses them.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-peers}
case $build in /*) ;; *) build=$root/$build ;; esac
VENV=${VENV:-/work/venv-peers}
py=$VENV/bin/python
REPEAT=${REPEAT:-2}
MIN_TIME=${MIN_TIME:-1}
BATCHES=${BATCHES:-"1 16 256 4096 16384"}
THREADS=${THREADS:-"1 2"}
OUT=${OUT:-$(mktemp -d /tmp/steer_peers.XXXXXX)}
mkdir -p "$OUT"
cd "$root"

if [ ! -x "$py" ] || ! "$py" -c "import taichi, warp, mujoco" >/dev/null 2>&1; then
  echo "run_peers: creating $VENV (taichi 1.7.x, warp-lang 1.9.x, mujoco)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "taichi==1.7.*" "warp-lang==1.9.*" mujoco numpy
fi
if [ ! -x "$build/bench/bench_peer" ] || [ ! -x "$build/steer" ]; then
  echo "run_peers: building bench_peer and steer in $build" >&2
  cmake -S "$root" -B "$build" -DSTEER_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bench_peer steer_cli >/dev/null
fi
bp=$build/bench/bench_peer
robot=configs/difftaichi_robot_a.json
bounce=configs/warp_bounce.json

# run NAME CMD...: runs CMD with stdout into $OUT/NAME.json, the load before it in load.tsv
run() {
  local name=$1; shift
  printf '%s\t%s\t%s\n' "$name" "$(date -u +%H:%M:%S)" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/load.tsv"
  "$@" >"$OUT/$name.json" 2>>"$OUT/stderr.log"
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  echo "python: $("$py" --version 2>&1)"
  echo "taichi: $("$py" -c 'import taichi as t; print(".".join(map(str, t.__version__)))' 2>/dev/null | tail -1)"
  echo "warp-lang: $("$py" -c 'import warp; print(warp.config.version)' 2>/dev/null | tail -1)"
  echo "mujoco: $("$py" -c 'import mujoco; print(mujoco.__version__)' 2>/dev/null | tail -1)"
  echo "steer: $(git -C "$root" rev-parse --short HEAD) ($build)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/env.txt" >&2

# correctness first: Warp's scene in warp.sim (float32), in float64 Warp kernels, and in steer
run bounce_check "$py" bench/peers/warp_bounce.py check --steer-peer "$bp" || echo "run_peers: bounce check FAILED" >&2
# and Warp's FEM scene (example_softbody_properties.py), then its batched timing at warp.sim's best B
run softbody_check "$py" bench/peers/warp_softbody.py check --steer-peer "$bp" || echo "run_peers: softbody check FAILED" >&2
# the taichi port's weights, shared with steer (robot A)
"$py" bench/peers/difftaichi_mass_spring.py --min-time 0 --min-reps 1 --vars-out "$OUT/robot_vars.json" >/dev/null 2>>"$OUT/stderr.log"
# Warp's JIT: every kernel compiled into an empty cache (the runs below load the user cache)
if [ -z "${SKIP_JIT:-}" ]; then
  run wp_jit "$py" bench/peers/warp_bounce.py time --batch 1 --fresh-cache --min-time 0 --min-reps 1
fi

for rep in $(seq 1 "$REPEAT"); do
  echo "run_peers: round $rep/$REPEAT (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  for B in $BATCHES; do
    run "wp_b${B}.$rep" "$py" bench/peers/warp_bounce.py time --batch "$B" --min-time "$MIN_TIME"
    for t in $THREADS; do
      run "st_bounce_b${B}_t${t}.$rep" "$bp" $bounce --batch "$B" --threads "$t" --min-time "$MIN_TIME"
    done
  done
  for B in ${SOFTBODY_BATCHES:-64 1024}; do
    run "wp_soft_b${B}.$rep" "$py" bench/peers/warp_softbody.py time --batch "$B" --min-time "$MIN_TIME"
    run "st_soft_b${B}_t1.$rep" "$bp" configs/warp_softbody.json --batch "$B" --threads 1 --min-time "$MIN_TIME"
  done
  Bmax=${BATCHES##* }
  run "st_bounce32_b${Bmax}_t1.$rep" "$bp" $bounce --batch "$Bmax" --threads 1 --precision float32 --min-time "$MIN_TIME"
  for t in $THREADS; do
    run "ti_b64_t${t}.$rep" "$py" bench/peers/difftaichi_mass_spring.py --batch 64 --threads "$t" --precision float64 --min-time "$MIN_TIME"
    run "st_robot_b64_t${t}.$rep" "$bp" $robot --vars-json "$OUT/robot_vars.json" --batch 64 --threads "$t" --min-time "$MIN_TIME"
  done
  if [ -n "${DIFFTAICHI:-}" ]; then
    run "dt_upstream_t1.$rep" "$py" bench/peers/difftaichi_upstream.py --difftaichi "$DIFFTAICHI" --threads 1 --min-time "$MIN_TIME"
    run "st_robot_f32_b1_t1.$rep" "$bp" $robot --vars-json "$OUT/robot_vars.json" --batch 1 --threads 1 --precision float32 --min-time "$MIN_TIME"
  fi
  run "mj_panda.$rep" "$py" bench/peers/mujoco_rollout_panda.py --steer-peer "$bp" --batch 64 256 --threads $THREADS --min-time "$MIN_TIME"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/env.txt" >&2
echo "run_peers: JSON files in $OUT" >&2
cat "$OUT/env.txt"
echo
"$py" bench/peers/summarize.py "$OUT"
