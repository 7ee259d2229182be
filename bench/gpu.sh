#!/usr/bin/env bash
# GPU benchmark for the device machine, called by gpu-check.sh after the build and tests:
#   BUILD_DIR=<build dir> bench/gpu.sh OUTDIR
# projectile (one thread per rollout): CUDA in float32 and float64 at B = 2^14 .. 2^20,
# K = ⌈√T⌉ and K = 1, plus the CPU backend at B = 2^14 on all cores for the CUDA/CPU ratio.
# mass_spring (one warp per rollout, 25 particles, T = 681): CUDA in float32 and float64 at
# B = 2^10 .. 2^16, K = ⌈√T⌉, plus the CPU backend at B = 2^10 on all cores.
# Panda (articulated, one thread per rollout, T = 250): CUDA float32/float64 at B = 2^14 .. 2^20.
# Writes JSON and Markdown into OUTDIR; copy the tables into bench/RESULTS.md with the date,
# GPU and this command.
set -euo pipefail
out=${1:?usage: BUILD_DIR=<build dir> bench/gpu.sh OUTDIR}
bin=${BUILD_DIR:-build}/bench/bench_rollout
mkdir -p "$out"
batches=16384,32768,65536,131072,262144,524288,1048576
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/bench_gpu.txt" || true
for prec in float32 float64; do
  "$bin" --backend cuda --precision "$prec" --batches "$batches" --checkpoint sqrt,1 \
    --max-mem-gb 48 --json "$out/bench_cuda_$prec.json" --markdown | tee "$out/bench_cuda_$prec.md"
done
"$bin" --backend cpu --precision both --batches 16384 --checkpoint sqrt,1 \
  --json "$out/bench_cpu.json" --markdown | tee "$out/bench_cpu.md"
# the Panda arm (one thread per rollout, T = 250 at 2 ms, implicitfast, the reach config's loss;
# dual-number adjoint over x and u): float32 and float64 at B = 2^14 .. 2^20, CPU at B = 1024
for prec in float32 float64; do
  "$bin" --config configs/panda_reach.json --backend cuda --precision "$prec" --batches "$batches" \
    --checkpoint sqrt --max-mem-gb 48 --json "$out/bench_cuda_panda_$prec.json" --markdown |
    tee "$out/bench_cuda_panda_$prec.md"
done
"$bin" --config configs/panda_reach.json --backend cpu --precision both --batches 1024 --checkpoint sqrt \
  --json "$out/bench_cpu_panda.json" --markdown | tee "$out/bench_cpu_panda.md"
ms_batches=1024,2048,4096,8192,16384,32768,65536
for prec in float32 float64; do
  "$bin" --model mass_spring --backend cuda --precision "$prec" --batches "$ms_batches" \
    --checkpoint sqrt --max-mem-gb 48 --json "$out/bench_cuda_mass_spring_$prec.json" --markdown |
    tee "$out/bench_cuda_mass_spring_$prec.md"
done
"$bin" --model mass_spring --backend cpu --precision both --batches 1024 --checkpoint sqrt \
  --json "$out/bench_cpu_mass_spring.json" --markdown | tee "$out/bench_cpu_mass_spring.md"
