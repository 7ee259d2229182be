#!/usr/bin/env python3
"""The standard walkers with contact, side by side with MuJoCo (docs/contact.md, "The standard
walkers"): each Gymnasium / dm_control walker that steer's import loads runs 1 s at its file's
timestep from MuJoCo's qpos0 (or its first keyframe), zero controls, with its own contact, in
steer (Python module, `Simulator.rollout`) and in MuJoCo (`mj_step`). Printed per file: the root's
height at the start, its lowest and its final height [m], its travel along x [m], and whether it
stands, falls (root below half its start height) or leaves the ground, for both engines; and
steer's contact law as the import set it.

Usage (needs the `mujoco` package of the import's version, numpy, and steer's module on
PYTHONPATH; the files come from tools/standard_robots.py's cache):
  PYTHONPATH=build/python <python with mujoco> tools/walker_table.py --cache build/standard_robots
"""
import argparse
import math
import pathlib
import sys

WALKERS = [
    ("gymnasium", "hopper.xml"),
    ("gymnasium", "walker2d.xml"),
    ("gymnasium", "half_cheetah.xml"),
    ("gymnasium", "ant.xml"),
    ("gymnasium", "humanoid.xml"),
    ("dm_control", "hopper.xml"),
    ("dm_control", "walker.xml"),
    ("dm_control", "cheetah.xml"),
    ("dm_control", "humanoid.xml"),
]


def file_path(cache, suite, name):
    if suite == "gymnasium":
        return cache / "gymnasium-1.4.0" / "gymnasium" / "envs" / "mujoco" / "assets" / name
    return cache / "dm_control-1.0.52" / "dm_control" / "suite" / name


def root_slots(state_names):
    """(height slot, x slot) of the root: a free joint's p.z and p.x, else the slides named
    root*z / root*x (the planar walkers' rootz, rootx)"""
    z = x = None
    for i, n in enumerate(state_names):
        if n.endswith(".p.z") and z is None:
            z = i
        if n.endswith(".p.x") and x is None:
            x = i
    if z is None:
        for i, n in enumerate(state_names):
            base = n[:-2] if n.endswith(".q") else None
            if base and base.startswith("root") and base.endswith("z") and z is None:
                z = i
            if base and base.startswith("root") and base.endswith("x") and x is None:
                x = i
    return z, x


def classify(z0, zmin, zend, ground_offset):
    if zend - ground_offset < 0.5 * (z0 - ground_offset):
        return "falls"
    return "stands"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=pathlib.Path, required=True,
                    help="tools/standard_robots.py's cache folder (the extracted wheels)")
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args()
    try:
        import mujoco
        import numpy as np
        import steer
    except ImportError as e:
        print(f"walker_table.py: needs mujoco, numpy and steer's module: {e}", file=sys.stderr)
        return 77
    rows = []
    for suite, name in WALKERS:
        path = file_path(args.cache, suite, name)
        if not path.is_file():
            print(f"walker_table.py: --cache: no {path}", file=sys.stderr)
            return 2
        m = mujoco.MjModel.from_xml_path(str(path))
        steps = int(round(args.seconds / m.opt.timestep))
        cfg = {"name": f"walker_{suite}_{name[:-4]}",
               "model": {"type": "articulated", "mjcf": str(path)},
               "simulation": {"steps": steps, "precision": "float64"},
               "loss": {"control_effort": 1.0},
               "validation": {"enabled": False}}
        try:
            sim = steer.load(cfg)
        except ValueError as e:
            rows.append((suite, name, None, str(e).splitlines()[0][:120]))
            continue
        b = sim.default_batch()
        x0 = b.x0[:1].copy()
        u = np.zeros((1, steps, sim.nu))
        th = b.theta[:1].copy()
        r = sim.rollout(x0, u, th, trajectory_stride=1)
        tr = r.trajectory[0]
        zi, xi = root_slots(sim.state_names)
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        zq = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "rootz")] \
            if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "rootz") >= 0 else 2
        xq = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "rootx")] \
            if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "rootx") >= 0 else 0
        mz = [d.qpos[zq]]
        mx0 = d.qpos[xq]
        ncon = 0
        deepest = 0.0
        for _ in range(steps):
            mujoco.mj_step(m, d)
            mz.append(d.qpos[zq])
            ncon = max(ncon, d.ncon)
            if d.ncon:
                deepest = max(deepest, -min(c.dist for c in d.contact[:d.ncon]))
        sz = tr[:, zi]
        # a planar root's rootz is relative to the body's rest height: the start is 0 there
        entry = {
            "steer": (sz[0], sz.min(), sz[-1], tr[-1, xi] - tr[0, xi] if xi is not None else 0.0),
            "mujoco": (mz[0], min(mz), mz[-1], d.qpos[xq] - mx0),
            "mujoco_contacts": ncon, "mujoco_deepest": deepest,
            "law": sim.effective_config["model"].get("contacts_law", "—"),
            "pairs": len(sim.effective_config["model"].get("pairs", [])),
            "points": len(sim.effective_config["model"].get("contacts", [])),
        }
        rows.append((suite, name, entry, None))
    print(f"{args.seconds:g} s at each file's timestep from qpos0, zero controls, the file's own "
          "contact; root height z (a free root's p.z; a planar root's rootz slide, relative to "
          "its body's pose) at the start, its lowest, its end, and its travel along x [m]")
    print()
    print("| file | steer z start / min / end | steer Δx | MuJoCo z start / min / end | MuJoCo Δx "
          "| MuJoCo contacts (max), deepest [mm] | steer points, pairs |")
    print("|---|---|---|---|---|---|---|")
    for suite, name, e, why in rows:
        if e is None:
            print(f"| {suite}/`{name}` | refused: {why} | | | | | |")
            continue
        s, mj = e["steer"], e["mujoco"]
        print(f"| {suite}/`{name}` | {s[0]:.3f} / {s[1]:.3f} / {s[2]:.3f} | {s[3]:+.3f} | "
              f"{mj[0]:.3f} / {mj[1]:.3f} / {mj[2]:.3f} | {mj[3]:+.3f} | "
              f"{e['mujoco_contacts']}, {1e3 * e['mujoco_deepest']:.1f} | {e['points']}, {e['pairs']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
