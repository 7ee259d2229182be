#!/usr/bin/env python3
"""bench/roofline.py on hand-made measurements (no build needed): the CPU roofline's arithmetic,
the H200 prediction's occupancy and bounds, the comparison with a device's JSON, and the usage
errors (exit 2).

One scene (the projectile) with round figures: 24 flops and 104 bytes per forward step in
float64 on a CPU of 40 GFLOP/s unfused and 10 GB/s, so the roofline is min(40e9/24, 10e9/104) =
9.615e7 rollout-steps/s (memory), and a measured 2.4e7 is 0.250 of it and 0.6 GFLOP/s."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "bench" / "roofline.py"
CEILING = {"threads": 1, "isa": "avx2+fma", "peak_fp64_gflops": 40.0, "peak_fp32_gflops": 80.0,
           "unfused_fp64_gflops": 40.0, "unfused_fp32_gflops": 80.0, "triad_gbs": 10.0, "triad_mb": 768}
WORK = {"forward_flops": 24, "forward_bytes": 104, "adjoint_flops": 52, "adjoint_bytes": 232,
        "forward_backward_flops": 76, "forward_backward_bytes": 336}
SCENE = {"config": "bench/configs/projectile_throughput.json", "model_info": {"nx": 6},
         "results": [{"precision": "float64", "batch": 4096, "steps": 300, "recompute_factor": 0.0,
                      "work_per_rollout_step": WORK,
                      "forward": {"rollout_steps_per_s_median": 2.4e7},
                      "forward_backward": {"rollout_steps_per_s_median": 1.0e7}}]}
# registers 64: 64 K / (64 x 32) = 32 resident warps, occupancy 1; a 2 KB frame at 32 warps x 32
# threads is 2 MB per SM, so 7/8 of it is counted as traffic
KERNELS = {"kernels": [
    {"kernel": "forward_kernel<Projectile, double>", "registers": 64, "stack_bytes": 0},
    {"kernel": "backward_kernel<Projectile, double, false>", "registers": 64, "stack_bytes": 2048}]}


def run(*args):
    proc = subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


class Roofline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name)
        (self.out / "ceiling.json").write_text(json.dumps(CEILING))
        (self.out / "scene0.json").write_text(json.dumps(SCENE))
        (self.out / "kernels.json").write_text(json.dumps(KERNELS))
        self.prediction = self.out / "prediction.json"

    def tearDown(self):
        self.tmp.cleanup()

    def tabulate(self):
        rc, text = run("--out", self.out, "--tabulate-only", "--kernels", self.out / "kernels.json",
                       "--prediction", self.prediction)
        self.assertEqual(rc, 0, text)
        return text

    def test_cpu_row(self):
        row = next(line for line in self.tabulate().splitlines() if "| projectile | float64 | 4096 | forward |" in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        # predicted, measured, measured/predicted, GFLOP/s, % of the fused peak
        self.assertEqual(cells[7:], ["9.62e+07", "2.4e+07", "0.250", "0.576", "1.4"])

    def test_h200_prediction(self):
        self.tabulate()
        p = {(q["pass"]): q for q in json.loads(self.prediction.read_text())["predictions"]}
        # forward: compute 34e12 x 1 x (2.4e7 x 24 / 40e9) / 24 = 2.04e10; memory 4.8e12 / 104 = 4.6e10
        self.assertAlmostEqual(p["forward"]["predicted_rollout_steps_per_s"] / 2.04e10, 1, places=6)
        self.assertEqual(p["forward"]["bound"], "compute")
        # fwd+bwd: bytes 336 + 2 x 6 x 8 / 18 (checkpoints, K = 18) + 2 x 2048 x 7/8 = 3925.33
        self.assertAlmostEqual(p["fwd+bwd"]["predicted_rollout_steps_per_s"] / (4.8e12 / (336 + 96 / 18 + 3584)), 1,
                               places=6)
        self.assertEqual(p["fwd+bwd"]["bound"], "memory")

    def test_compare(self):
        self.tabulate()
        gpu = self.out / "gpu"
        gpu.mkdir()
        (gpu / "bench_cuda_projectile.json").write_text(json.dumps({
            "config": "/somewhere/bench/configs/projectile_throughput.json",
            "results": [{"precision": "float64", "batch": 1024, "cuda": {
                            "kernel_forward_rollout_steps_per_s": 1e9,
                            "kernel_forward_backward_rollout_steps_per_s": 1e8}},
                        {"precision": "float64", "batch": 16384, "cuda": {
                            "kernel_forward_rollout_steps_per_s": 1.02e10,
                            "kernel_forward_backward_rollout_steps_per_s": 6e8}}]}))
        rc, text = run("--compare", gpu, "--prediction", self.prediction)
        self.assertEqual(rc, 0, text)
        forward = next(line for line in text.splitlines() if "| forward |" in line)
        self.assertIn("1.02e+10 (16384)", forward)  # the largest batch
        self.assertIn("| 0.500 |", forward)

    def test_usage_errors(self):
        for args, what in ((["--compare", self.out / "absent"], "--compare"),
                           (["--tabulate-only"], "--out"),
                           (["--out", self.out, "--min-time", "0"], "--min-time"),
                           (["--out", self.out / "empty", "--tabulate-only"], "ceiling.json")):
            rc, text = run(*args)
            self.assertEqual(rc, 2, text)
            self.assertIn(what, text)


if __name__ == "__main__":
    unittest.main()
