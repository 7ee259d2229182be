#!/usr/bin/env bash
# Peer benchmarks on this machine's CPU: DiffTaichi-style mass-spring robot (Taichi autodiff)
# and Warp's bounce scene (warp.sim + wp.Tape) against steer's CPU backend on the same tasks.
#
#   bash bench/peers/run_peers.sh [BUILD_DIR]       (default BUILD_DIR: build-peers)
#   env: REPEAT=3 (timing repeats of every case, interleaved; the best is kept)
#        MIN_TIME=2 (seconds of timed calls per figure and run)   OUT=folder for the JSON files
#
# Creates the Python venv bench/venv (taichi 1.7.x, warp-lang 1.9.x from PyPI) if it is
# missing, builds bench_peer and the steer CLI (CPU only) if missing, runs every case REPEAT
# times, then prints the Markdown tables (bench/peers/summarize.py). The peers are bench tools
# only: nothing in steer's build or tests uses them.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-peers}
case $build in /*) ;; *) build=$root/$build ;; esac
venv=$root/bench/venv
py=$venv/bin/python
REPEAT=${REPEAT:-3}
MIN_TIME=${MIN_TIME:-2}
OUT=${OUT:-$(mktemp -d /tmp/steer_peers.XXXXXX)}
mkdir -p "$OUT"
cd "$root"

if [ ! -x "$py" ] || ! "$py" -c "import taichi, warp" >/dev/null 2>&1; then
  echo "run_peers: creating $venv (taichi 1.7.x, warp-lang 1.9.x)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "taichi==1.7.*" "warp-lang==1.9.*"
fi
if [ ! -x "$build/bench/bench_peer" ] || [ ! -x "$build/steer" ]; then
  echo "run_peers: building bench_peer and steer in $build" >&2
  cmake -S "$root" -B "$build" -DSTEER_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bench_peer steer_cli >/dev/null
fi
bp=$build/bench/bench_peer
robot=configs/difftaichi_robot_a.json
bounce=configs/warp_bounce.json
ti() { "$py" bench/peers/difftaichi_mass_spring.py --min-time "$MIN_TIME" "$@" >/dev/null 2>>"$OUT/stderr.log"; }
wpb() { "$py" bench/peers/warp_bounce.py --min-time "$MIN_TIME" "$@" >/dev/null 2>>"$OUT/stderr.log"; }
st() { local out=$1; shift; "$bp" "$@" --min-time "$MIN_TIME" >"$out" 2>>"$OUT/stderr.log"; }

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  echo "python: $("$py" --version 2>&1)"
  echo "taichi: $("$py" -c 'import taichi as t; print(".".join(map(str, t.__version__)))' 2>/dev/null | tail -1)"
  echo "warp-lang: $("$py" -c 'import warp; print(warp.config.version)' 2>/dev/null | tail -1)"
  echo "steer: $(git -C "$root" rev-parse --short HEAD) ($build)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/env.txt" >&2

# gradients (once): the weights both simulators use, steer's gradient with them, FD checks
ti --min-time 0 --min-reps 1 --vars-out "$OUT/robot_vars.json" --json "$OUT/ti_f64_b1_t1.1.json"
"$bp" $robot --vars-json "$OUT/robot_vars.json" --no-timing >"$OUT/st_ms_grad.grad.json"
"$bp" $bounce --fd 1e-7 --no-timing >"$OUT/st_bounce.grad.json"
"$bp" $bounce --set model.ground.damping=0 --fd 1e-7 --no-timing >"$OUT/st_bounce_kd0.grad.json"
wpb --min-time 0 --min-reps 1 --fd-eps 1e-2,1e-3,1e-4 --scene example --json "$OUT/wp_example.grad.json"
wpb --min-time 0 --min-reps 1 --fd-eps 1e-3 --scene ground --json "$OUT/wp_ground.grad.json"
wpb --min-time 0 --min-reps 1 --fd-eps 1e-3 --scene ground --kd 0 --json "$OUT/wp_ground_kd0.grad.json"
"$build/steer" check $bounce --backend cpu --out "$OUT/runs" --quiet >"$OUT/steer_check_bounce.txt" || true
rm -f "$OUT/ti_f64_b1_t1.1.json"  # a 0-second timing: replaced by rep 1 below

# timings, interleaved so that load changes hit every case alike
for rep in $(seq 1 "$REPEAT"); do
  echo "run_peers: repeat $rep/$REPEAT (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  ti --threads 1 --batch 1 --precision float64 --json "$OUT/ti_f64_b1_t1.$rep.json"
  st "$OUT/st_ms_f64_b1_t1.$rep.json" $robot --vars-json "$OUT/robot_vars.json" --threads 1 --batch 1
  ti --threads 1 --batch 1 --precision float32 --json "$OUT/ti_f32_b1_t1.$rep.json"
  st "$OUT/st_ms_f32_b1_t1.$rep.json" $robot --vars-json "$OUT/robot_vars.json" --threads 1 --batch 1 --precision float32
  ti --threads 1 --batch 64 --precision float64 --json "$OUT/ti_f64_b64_t1.$rep.json"
  ti --threads 2 --batch 64 --precision float64 --json "$OUT/ti_f64_b64_t2.$rep.json"
  st "$OUT/st_ms_f64_b64_t1.$rep.json" $robot --vars-json "$OUT/robot_vars.json" --threads 1 --batch 64
  st "$OUT/st_ms_f64_b64_t2.$rep.json" $robot --vars-json "$OUT/robot_vars.json" --threads 2 --batch 64
  wpb --fd-eps "" --scene example --json "$OUT/wp_example.$rep.json"
  wpb --fd-eps "" --scene example --soft-contact-max 1 --json "$OUT/wp_example_tuned.$rep.json"
  wpb --fd-eps "" --scene ground --json "$OUT/wp_ground.$rep.json"
  st "$OUT/st_bounce_f64_b1_t1.$rep.json" $bounce --threads 1 --batch 1
  st "$OUT/st_bounce_f32_b1_t1.$rep.json" $bounce --threads 1 --batch 1 --precision float32
  st "$OUT/st_bounce_f64_b4096_t1.$rep.json" $bounce --threads 1 --batch 4096
  st "$OUT/st_bounce_f64_b4096_t2.$rep.json" $bounce --threads 2 --batch 4096
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/env.txt" >&2
echo "run_peers: JSON files in $OUT" >&2
cat "$OUT/env.txt"
echo
"$py" bench/peers/summarize.py "$OUT"
echo
echo "steer check $bounce:"
grep -E "gradient check|labels" "$OUT/steer_check_bounce.txt" || true
