#!/usr/bin/env python3
"""MuJoCo's C engine (mujoco.rollout) on the Panda reach's work at several thread counts, forward
only, next to steer's forward on the same work (bench_peer), interleaved.

The work is mjx_panda.py's (the same arm, servos, targets, T = 250 steps of 2 ms, implicitfast,
constraints off, the targets at 1 % of panda_reach rollout 0's offsets so that no servo
saturates): B arms from the home pose. MuJoCo: mujoco.rollout.rollout with one MjData per
thread (its thread pool splits the B rollouts), float64. steer: bench_peer's forward call
(Problem::evaluate without the gradient) with --threads N, float64. MuJoCo has no adjoint, so
only forward is compared. Every figure: one warm-up call, then repeats until --min-time; best
and median wall time and (steer) CPU time per call; the 1-minute load average is recorded with
each figure.

  python bench/peers/mujoco_rollout_panda.py --steer-peer build-peers/bench/bench_peer \
      --batch 64 256 --threads 1 2 --repeat 2 --json out.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from mujoco import rollout  # noqa: E402

from mujoco_saturation import HOME, TARGETS, mujoco_model, servo_parameters  # noqa: E402


def load1():
    return float(open("/proc/loadavg").read().split()[0])


def panda(dt):
    m = mujoco_model()
    m.opt.timestep = dt
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return m


def mujoco_fwd(target, batch, steps, dt, threads, min_time):
    m = panda(dt)
    datas = [mujoco.MjData(m) for _ in range(threads)]
    d = datas[0]
    d.qpos[:] = HOME
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    x0 = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, x0, spec)
    ctrl = np.tile(np.asarray(target)[None, None, :], (batch, steps, 1))
    x0s = np.tile(x0, (batch, 1))
    data_arg = datas if threads > 1 else d

    def run():
        return rollout.rollout(m, data_arg, x0s, ctrl)[0]

    run()
    ws, cs = [], []
    while sum(ws) < min_time or len(ws) < 3:
        c0, t0 = time.process_time(), time.perf_counter()
        state = run()
        ws.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    s = state[0, -1]
    q, v = s[1:8], s[8:15]
    e = q - np.asarray(target)
    loss = 0.5 * e @ e + 0.5 * 0.01 * v @ v
    return {"best_s": min(ws), "median_s": statistics.median(ws), "cpu_best_s": min(cs), "reps": len(ws),
            "loss": float(loss)}


def steer_fwd(peer, target, batch, steps, dt, threads, min_time):
    """bench_peer on mjx_panda.py's config (the same arm, servos, loss), forward only"""
    cfg = {
        "name": "mujoco_rollout_panda",
        "model": {"type": "articulated", "include": "models/panda_arm.json", "integrator": "implicitfast",
                  "targets": target, "torque_limits": {"sharpness": 1000.0}},
        "simulation": {"dt": dt, "steps": steps, "precision": "float64", "checkpoint_every": "sqrt"},
        "initial_state": {"q": HOME},
        "loss": {"terminal": [{"state": f"joint{j + 1}.q", "target": target[j]} for j in range(7)] +
                             [{"state": f"joint{j + 1}.v", "target": 0, "weight": 0.01} for j in range(7)],
                 "control_effort": 1e-12},
        "variables": {"controls": {"lower": -87, "upper": 87}},
        "validation": {"enabled": False},
    }
    work = tempfile.mkdtemp(prefix="steer_mjc.")
    os.makedirs(os.path.join(work, "models"))
    os.symlink(os.path.join(ROOT, "configs", "models", "panda_arm.json"), os.path.join(work, "models", "panda_arm.json"))
    path = os.path.join(work, "panda.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    out = subprocess.run([peer, path, "--batch", str(batch), "--threads", str(threads), "--min-time", str(min_time),
                          "--forward-only"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"mujoco_rollout_panda: {peer} {path} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steer-peer", default=os.path.join(ROOT, "build-peers", "bench", "bench_peer"))
    ap.add_argument("--batch", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--dt", type=float, default=0.002)
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args()
    target = [h + 0.01 * (t - h) for h, t in zip(HOME, TARGETS["reach rollout 0"])]
    rows = []
    for rep in range(a.repeat):
        for b in a.batch:
            for n in a.threads:
                l0 = load1()
                mc = mujoco_fwd(target, b, a.steps, a.dt, n, a.min_time)
                l1 = load1()
                st = steer_fwd(a.steer_peer, target, b, a.steps, a.dt, n, a.min_time)
                l2 = load1()
                rows.append({"repeat": rep, "batch": b, "threads": n, "mujoco": mc, "steer": st["forward"],
                             "loss_mujoco": mc["loss"], "loss_steer": st["loss"], "load_mujoco": l0, "load_steer": l1,
                             "load_after": l2})
                print(f"rep {rep} B {b} threads {n}: MuJoCo {1e3 * mc['best_s']:.3f} ms, steer "
                      f"{1e3 * st['forward']['best_s']:.3f} ms, ratio {mc['best_s'] / st['forward']['best_s']:.2f} "
                      f"(load {l0:.2f}, {l1:.2f})", file=sys.stderr)
    out = {"mujoco": mujoco.__version__, "steps": a.steps, "dt": a.dt, "rows": rows}
    text = json.dumps(out, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
