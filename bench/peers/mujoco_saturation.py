#!/usr/bin/env python3
"""The Panda under saturated PD servos, steer against MuJoCo's implicitfast.

panda_reach's arms start at the home pose with joint targets up to 0.3 rad away, so the
servos (k_p = 4500 / 3500 / 2000 N m/rad, k_v = k_p / 10, force limits 87 / 12 N m) saturate
at once. For some targets joints 1 and 3, nearly coaxial while joint 2 is near 0, fall into a
period-2 chatter: q̇ flips sign every step. This script runs the same arm, servos and targets
in MuJoCo (configs/mjcf/panda.xml with its motors replaced by <position> servos with
forcerange, integrator implicitfast) and in steer (float64 and float32, steer's smooth
saturation at the default sharpness 5 /(N m) and at 1000 /(N m), close to MuJoCo's hard
clamp; and with the servo made implicit through the saturation, model.torque_limits.
newton_iterations = 4, a step MuJoCo does not have), and reports for each run which joint chatters most, when, and how far the
trajectory is from MuJoCo's.

    python3 -m venv /tmp/mjv && /tmp/mjv/bin/pip install mujoco numpy
    /tmp/mjv/bin/python bench/peers/mujoco_saturation.py --steer build-arm/steer

A bench tool only: nothing in steer's build or tests imports MuJoCo's Python package.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOME = [0.0, 0.0, 0.0, -1.57079, 0.0, 1.57079, -0.7853]
# rollouts 0 and 6 of configs/panda_reach.json's batch (seed 11, jitter 0.3 rad), as its
# artifact lists them (rollout 6 chatters, rollout 0 does not), and rollout 0 of
# configs/panda.json (targets 0.02 rad around theirs; joint 7 chatters under MuJoCo's implicitfast
# and steer's newton_iterations 0)
TARGETS = {
    "panda.json rollout 0": [0.010175412166114318, 0.017972048115705765, -0.015303428758619276, -1.5551134729315008,
                             -0.014349137471848527, 1.5529937263401576, -0.7719990807787421],
    "reach rollout 0": [-0.20057213243732597, 0.16405551369206356, -0.0731848804394094, -1.45161314810231,
                        -0.26477466994731386, 1.4411809593318021, -0.5488302050668603],
    "reach rollout 6": [-0.05283423627573505, -0.08284228018130124, 0.07441790688650529, -1.671401448927371,
                        -0.2549938986025883, 1.4864231244635089, -0.9209497931175685],
}


def servo_parameters():
    arm = json.load(open(os.path.join(ROOT, "configs", "models", "panda_arm.json")))
    joints = [b["joint"] for b in arm["bodies"] if "joint" in b]
    return [(j["name"], j["kp"], j["kv"], j["force_limit"]) for j in joints]


def mujoco_model():
    xml = open(os.path.join(ROOT, "configs", "mjcf", "panda.xml")).read()
    xml = xml.replace('integrator="Euler"', 'integrator="implicitfast"')
    servos = "".join(
        f'    <position name="servo_{n}" joint="{n}" kp="{kp}" kv="{kv}" forcelimited="true" '
        f'forcerange="{-lim} {lim}" ctrllimited="false"/>\n' for n, kp, kv, lim in servo_parameters())
    xml = re.sub(r"<actuator>.*</actuator>", "<actuator>\n" + servos + "  </actuator>", xml, flags=re.S)
    xml = re.sub(r"<keyframe>.*</keyframe>", "", xml, flags=re.S)  # its ctrl has the motors' size
    return mujoco.MjModel.from_xml_string(xml)


def run_mujoco(target, steps, dt):
    m = mujoco_model()
    m.opt.timestep = dt
    d = mujoco.MjData(m)
    d.qpos[:] = HOME
    d.ctrl[:] = target
    q, v = [d.qpos.copy()], [d.qvel.copy()]
    for _ in range(steps):
        mujoco.mj_step(m, d)
        q.append(d.qpos.copy())
        v.append(d.qvel.copy())
    return np.array(q), np.array(v)


def run_steer(binary, target, steps, dt, precision, sharpness, work, newton_iterations=0):
    cfg = {
        "name": "saturation",
        "model": {"type": "articulated", "include": "models/panda_arm.json", "integrator": "implicitfast",
                  "targets": target,
                  "torque_limits": {"sharpness": sharpness, "newton_iterations": newton_iterations}},
        "simulation": {"dt": dt, "steps": steps, "precision": precision, "backend": "cpu"},
        "initial_state": {"q": HOME},
        "loss": {"terminal": [{"state": "joint1.q", "target": target[0]}]},
        "validation": {"enabled": False},
        "output": {"trajectory_stride": 1, "trajectory_rollouts": 1},
    }
    path = os.path.join(work, "saturation.json")
    json.dump(cfg, open(path, "w"))
    out = tempfile.mkdtemp(dir=work)
    subprocess.run([binary, "run", path, "--quiet", "--out", out], check=True, stdout=subprocess.DEVNULL)
    (run_dir,) = os.listdir(out)
    rows = list(csv.DictReader(open(os.path.join(out, run_dir, "trajectory.csv"))))
    qk = [k for k in rows[0] if k.endswith(".q_rad")]
    vk = [k for k in rows[0] if k.endswith(".v_rad/s")]
    return (np.array([[float(r[k]) for k in qk] for r in rows]), np.array([[float(r[k]) for k in vk] for r in rows]))


def chatter_steps(v, joint=0, jump=0.05):
    """steps k where q̇ of the joint turns back: (v_k − v_{k−1})(v_{k+1} − v_k) < 0 with a jump > 0.05 rad/s"""
    dv = np.diff(v[:, joint])
    return [k for k in range(1, len(dv)) if dv[k - 1] * dv[k] < 0 and abs(dv[k - 1]) > jump]


def describe(name, q, v, q_ref):
    per_joint = [chatter_steps(v, j) for j in range(v.shape[1])]
    j = max(range(len(per_joint)), key=lambda i: len(per_joint[i]))
    ch = per_joint[j]
    diff = np.abs(q - q_ref).max(axis=1)
    first = next((k for k in range(len(diff)) if diff[k] > 1e-4), None)
    return ("| %s | %s | %d | %s | %s | %s | %.4f |" % (
        name, f"joint{j + 1}" if ch else "–", len(ch), f"{ch[0]}–{ch[-1]}" if ch else "–",
        "–" if first is None else first, "%.2g" % diff.max(), q[-1, 0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steer", default=os.path.join(ROOT, "build-arm", "steer"), help="the steer CLI")
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--dt", type=float, default=0.002)
    a = ap.parse_args()
    if not os.access(a.steer, os.X_OK):
        sys.exit(f"mujoco_saturation: --steer {a.steer} is not an executable")
    work = tempfile.mkdtemp(prefix="steer_saturation.")
    os.makedirs(os.path.join(work, "models"))
    shutil.copy(os.path.join(ROOT, "configs", "models", "panda_arm.json"), os.path.join(work, "models"))
    print(f"MuJoCo {mujoco.__version__}; T = {a.steps} steps of {a.dt} s; angles in rad")
    for label, target in TARGETS.items():
        q_mj, v_mj = run_mujoco(target, a.steps, a.dt)
        print(f"\n{label}: target {np.round(target, 4).tolist()}\n")
        print("| run | most chattering joint | its chatter steps | first–last | first step with "
              "max_j |q_j − q_j(MuJoCo)| > 1e-4 | max_k,j |q − q(MuJoCo)| | q_1(T) |")
        print("|---|---|---:|---|---:|---:|---:|")
        print(describe("MuJoCo implicitfast, hard clamp", q_mj, v_mj, q_mj))
        # newton_iterations 4: the servo implicit through the saturation, a step MuJoCo does not
        # have, so there the distance column is how far the chatter-free path leaves MuJoCo's
        for newton in (0, 4):
            servo = ", implicit servo (4 Newton iterations)" if newton else ""
            for precision in ("float64", "float32"):
                for sharpness in (5.0, 1000.0):
                    q, v = run_steer(a.steer, target, a.steps, a.dt, precision, sharpness, work, newton)
                    print(describe(f"steer {precision}, sharpness {sharpness:g} /(N m){servo}", q, v, q_mj))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
