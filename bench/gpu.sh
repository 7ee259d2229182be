#!/usr/bin/env bash
# GPU benchmark for the device machine, called by gpu-check.sh after the build and tests:
#   BUILD_DIR=<build dir> bench/gpu.sh OUTDIR
# A session has one ~7-minute device call, so the items run in order of what only a GPU can
# answer, each under `timeout` with what is left of GPU_BENCH_SECONDS (default 240 s): an item
# that does not fit is skipped and says so in OUTDIR/skipped.txt, the rest still run.
#   1. Panda (articulated, one thread per rollout, T = 250 at 2 ms, implicitfast, the reach
#      config's loss), CUDA float32 at B = 2^14 .. 2^20: the H200 targets (≥ 1e9 forward and
#      ≥ 2.5e8 forward+backward rollout-steps/s).
#   1b. The quadruped (bench/configs/quadruped_throughput.json: ArticulatedLegged, T = 250 at
#      2 ms, four feet in contact), CUDA float32 at B = 2^12 .. 2^18; its CPU row in item 6.
#   2. The 4096-variant morphology sweep (configs/morphology_sweep.json) on CUDA and on the CPU
#      (all cores): wall time of each and both summaries, for CPU/CUDA agreement of the ranking.
#   3. mass_spring (one warp per rollout, 25 particles, T = 681), CUDA float32 and float64 at
#      B = 2^10 .. 2^16, K = ⌈√T⌉.
#   4. projectile (one thread per rollout), CUDA float32 and float64 at B = 2^14 .. 2^20,
#      K = ⌈√T⌉ and K = 1.
#   5. The Panda with the implicit servo (configs/panda_reach_servo.json, 4 Newton iterations
#      through the force limits), CUDA float32 at the largest three batches: its cost next to
#      item 1 (1.8x forward and 1.6x forward+backward on the CPU).
#   6. Panda float64 on CUDA; then the CPU backend on all cores for the CUDA/CPU ratios
#      (projectile B = 2^14, Panda B = 2^10, mass_spring B = 2^10).
# Writes JSON and Markdown into OUTDIR; record the tables as a new entry in bench/log/ (date,
# GPU, commit, this command) and fill the CUDA rows of bench/RESULTS.md. GPU_BENCH_BACKEND=cpu with GPU_BENCH_SMALL=1 runs the same script on
# the CPU with small batches, to try it where no GPU is (the figures then mean nothing).
set -uo pipefail
out=${1:?usage: BUILD_DIR=<build dir> bench/gpu.sh OUTDIR}
build=${BUILD_DIR:-build}
bin=$build/bench/bench_rollout
dev=${GPU_BENCH_BACKEND:-cuda}
budget=${GPU_BENCH_SECONDS:-240}
mkdir -p "$out"
: > "$out/skipped.txt"
start=$SECONDS

if [[ -n "${GPU_BENCH_SMALL:-}" ]]; then
  batches=64,128; servo_batches=128; ms_batches=16,32; legged_batches=32,64; cpu_b=32; min_time=0.05
else
  batches=16384,32768,65536,131072,262144,524288,1048576
  servo_batches=262144,524288,1048576
  ms_batches=1024,2048,4096,8192,16384,32768,65536; legged_batches=4096,16384,65536,262144
  cpu_b=1024; min_time=0.2
fi

# item NAME LOG CMD...: run CMD under the time left, its output teed into OUTDIR/LOG
item() {
  local name=$1 log=$2
  shift 2
  local left=$((budget - (SECONDS - start)))
  if ((left < 10)); then
    echo "$name: skipped, ${left}s of the ${budget}s budget left" | tee -a "$out/skipped.txt"
    return 0
  fi
  echo "== $name (budget left ${left}s)"
  local t0=$SECONDS
  timeout "$left" "$@" 2>&1 | tee "$out/$log"
  local rc=${PIPESTATUS[0]}
  echo "== $name: rc $rc in $((SECONDS - t0))s" | tee -a "$out/times.txt"
  ((rc == 124)) && echo "$name: cut off by the budget after $((SECONDS - t0))s" >> "$out/skipped.txt"
  return 0
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/bench_gpu.txt" 2>&1 || true

item "panda cuda float32" bench_cuda_panda_float32.md \
  "$bin" --config configs/panda_reach.json --backend "$dev" --precision float32 --batches "$batches" \
  --checkpoint sqrt --max-mem-gb 48 --min-time "$min_time" --json "$out/bench_cuda_panda_float32.json" --markdown

# the quadruped (ArticulatedLegged: a free root, 12 servos, four feet in ground contact),
# bench/configs/quadruped_throughput.json, CUDA float32; its CPU row is at the end
item "quadruped cuda float32" bench_cuda_quadruped_float32.md \
  "$bin" --config bench/configs/quadruped_throughput.json --backend "$dev" --precision float32 --batches "$legged_batches" \
  --checkpoint sqrt --max-mem-gb 48 --min-time "$min_time" --json "$out/bench_cuda_quadruped_float32.json" --markdown

# the sweep: same config, seed and variables on both backends; the summary ranks the
# variants, the artifact holds the timings (times.txt: whole seconds of each)
for backend in "$dev" cpu; do
  item "morphology sweep $backend" "sweep_$backend.txt" \
    "$build/steer" run configs/morphology_sweep.json --backend "$backend" --out "$out/runs_$backend" --quiet
done

for prec in float32 float64; do
  item "mass_spring cuda $prec" "bench_cuda_mass_spring_$prec.md" \
    "$bin" --config bench/configs/mass_spring_throughput.json --backend "$dev" --precision "$prec" --batches "$ms_batches" \
    --checkpoint sqrt --max-mem-gb 48 --min-time "$min_time" --json "$out/bench_cuda_mass_spring_$prec.json" --markdown
done

for prec in float32 float64; do
  item "projectile cuda $prec" "bench_cuda_$prec.md" \
    "$bin" --backend "$dev" --precision "$prec" --batches "$batches" --checkpoint sqrt,1 \
    --max-mem-gb 48 --min-time "$min_time" --json "$out/bench_cuda_$prec.json" --markdown
done

item "panda servo cuda float32" bench_cuda_panda_servo_float32.md \
  "$bin" --config configs/panda_reach_servo.json --backend "$dev" --precision float32 --batches "$servo_batches" \
  --checkpoint sqrt --max-mem-gb 48 --min-time "$min_time" --json "$out/bench_cuda_panda_servo_float32.json" --markdown

item "panda cuda float64" bench_cuda_panda_float64.md \
  "$bin" --config configs/panda_reach.json --backend "$dev" --precision float64 --batches "$batches" \
  --checkpoint sqrt --max-mem-gb 48 --min-time "$min_time" --json "$out/bench_cuda_panda_float64.json" --markdown

item "projectile cpu" bench_cpu.md \
  "$bin" --backend cpu --precision both --batches "${batches%%,*}" --checkpoint sqrt,1 \
  --min-time "$min_time" --json "$out/bench_cpu.json" --markdown
item "panda cpu" bench_cpu_panda.md \
  "$bin" --config configs/panda_reach.json --backend cpu --precision both --batches "$cpu_b" --checkpoint sqrt \
  --min-time "$min_time" --json "$out/bench_cpu_panda.json" --markdown
item "quadruped cpu" bench_cpu_quadruped.md \
  "$bin" --config bench/configs/quadruped_throughput.json --backend cpu --precision float32 --batches "$cpu_b" --checkpoint sqrt \
  --min-time "$min_time" --json "$out/bench_cpu_quadruped.json" --markdown
item "mass_spring cpu" bench_cpu_mass_spring.md \
  "$bin" --config bench/configs/mass_spring_throughput.json --backend cpu --precision both --batches "$cpu_b" --checkpoint sqrt \
  --min-time "$min_time" --json "$out/bench_cpu_mass_spring.json" --markdown

echo "gpu.sh: $((SECONDS - start))s of ${budget}s; skipped or cut: $(wc -l < "$out/skipped.txt")"
