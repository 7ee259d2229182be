#!/usr/bin/env bash
# CPU benchmark of every model, one thread and all cores (issue 5's item-1 tables):
#   BUILD_DIR=<build dir> bench/cpu.sh OUTDIR
# projectile (worked example, T = 300) at B = 1, 4096, 65536; DiffTaichi robot A
# (configs/difftaichi_robot_a.json, T = 681) at B = 1, 64, 1024; the Panda reach arm
# (configs/panda_reach.json, T = 250) at B = 1, 16, 256; float32 and float64; each with K = ⌈√T⌉
# (the recompute) and with the stored forward pass (`stored`, what a config gets by default
# on the CPU: simulation.store_forward_mb).
# Each table also carries the counted flops and bytes per rollout-step (op_count.h) and the
# achieved GFLOP/s and GB/s. Writes JSON and Markdown into OUTDIR; record the tables as a new
# entry in bench/log/ (date, machine from lscpu, commit, this command) and update the rows of
# bench/RESULTS.md they supersede.
set -euo pipefail
out=${1:?usage: BUILD_DIR=<build dir> bench/cpu.sh OUTDIR}
bin=${BUILD_DIR:-build}/bench/bench_rollout
mkdir -p "$out"
cores=$(nproc)
for t in 1 "$cores"; do
  "$bin" --backend cpu --precision both --batches 1,4096,65536 --threads "$t" --min-time 0.5 \
    --checkpoint sqrt,stored --json "$out/cpu_projectile_t$t.json" --markdown | tee "$out/cpu_projectile_t$t.md"
  "$bin" --config configs/difftaichi_robot_a.json --backend cpu --precision both --batches 1,64,1024 \
    --threads "$t" --min-time 0.5 --checkpoint sqrt,stored --json "$out/cpu_robot_a_t$t.json" --markdown | tee "$out/cpu_robot_a_t$t.md"
  "$bin" --config configs/panda_reach.json --backend cpu --precision both --batches 1,16,256 \
    --threads "$t" --min-time 0.5 --checkpoint sqrt,stored --json "$out/cpu_panda_t$t.json" --markdown | tee "$out/cpu_panda_t$t.md"
done
