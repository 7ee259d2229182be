"""The Python binding's cost per batch call, against the rollouts' own time (issue 24).

Runs B robot-A rollouts (configs/difftaichi_robot_a.json, 681 steps) with gradients through
steer.Simulator.rollout, `repeats` times, and compares each call's wall time in Python with the
engine's own time for the batch (RolloutResult.engine_seconds: run_batch alone). The difference
is what the binding adds: argument checks (x0, u and theta are read in place when C-contiguous),
wrapping the result buffers as arrays, and the GIL hand-over. Prints one line per call and a
JSON summary (median overhead in seconds and as a fraction of the engine time).

    PYTHONPATH=build/python python bench/python_overhead.py [--batch 4096] [--repeats 5] [--threads 0]
"""
import argparse
import json
import pathlib
import platform
import statistics
import time

import numpy as np

import steer

root = pathlib.Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--config", default=str(root / "configs" / "difftaichi_robot_a.json"))
ap.add_argument("--batch", type=int, default=4096)
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--threads", type=int, default=0, help="engine threads (0: all cores)")
ap.add_argument("--no-grad", action="store_true", help="forward only")
a = ap.parse_args()

cfg = json.loads(pathlib.Path(a.config).read_text())
cfg["batch"] = dict(cfg.get("batch", {}), size=a.batch)
sim = steer.load(cfg, base_dir=str(pathlib.Path(a.config).parent))
sim.threads = a.threads
b = sim.default_batch()
x0, u, theta = b.x0.copy(), b.u.copy(), b.theta.copy()
grad = not a.no_grad
sim.rollout(x0[:8], u[:8], theta[:8], grad=grad)  # the engine's per-thread scratch, first touch

rows = []
for i in range(a.repeats):
    t0 = time.perf_counter()
    r = sim.rollout(x0, u, theta, grad=grad)
    wall = time.perf_counter() - t0
    over = wall - r.engine_seconds
    rows.append((wall, r.engine_seconds, over))
    print(f"call {i}: wall {wall:.4f} s, engine {r.engine_seconds:.4f} s, binding {over * 1e3:.3f} ms "
          f"({100 * over / r.engine_seconds:.3f} %)")
over = statistics.median(x[2] for x in rows)
eng = statistics.median(x[1] for x in rows)
summary = {
    "config": pathlib.Path(a.config).name, "B": a.batch, "T": sim.T, "grad": grad, "threads": a.threads,
    "dtype": sim.dtype.name, "repeats": a.repeats, "engine_seconds_median": eng,
    "binding_seconds_median": over, "binding_fraction_median": over / eng,
    "input_bytes": int(x0.nbytes + u.nbytes + theta.nbytes), "cpu": platform.processor() or platform.machine(),
    "steer": steer.__version__,
}
print(json.dumps(summary))
