#!/usr/bin/env python3
"""A steer controller runs the same in MuJoCo (bench/hopper_policy.py's plumbing): Gymnasium's
Hopper-v5 under a policy of bench/configs/gymnasium_hopper_policy.json's shape (its observations, its
[32, 32] tanh network with seeded weights, its action held for 4 steps) from one start state,
steer's trajectory against MuJoCo's through gymnasium.make("Hopper-v5") and
bench/peers/gymnasium_policy_eval.py, after each of the first 8 actions (32 steps of 2 ms, RK4),
before the foot reaches the floor and with every joint inside its range, where the physics is
the same on both sides: every qpos and qvel within 1e-9. This checks what the episode returns of
the bench compare: the observation's mapping (names, scale, centre), the network, the clamp, the
hold, the start state.

Needs a Python with gymnasium 1.4.0 and mujoco (--rl-python); without one the test makes a venv
under --work with `pip install 'gymnasium[mujoco]==1.4.0' mujoco==4.0.1` (the extra brings imageio,
which gymnasium.envs.mujoco imports), and skips (77) where PyPI is
unreachable. The hopper.xml comes from the pinned wheel (tools/standard_robots.py's cache).

  hopper_policy_test.py --steer build/steer [--rl-python PY] [--work DIR] [--cache DIR]
"""
import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
import hopper_policy  # noqa: E402
import standard_robots  # noqa: E402

SKIP = 77
ACTIONS, TOL = 8, 1e-9
# a start with every joint well inside its range (thigh and leg in [-150°, 0], foot ±45°): the
# imported limits are a penalty in steer and a constraint in MuJoCo, so the check stays clear of them
# (joints in the file's order: rootx, rootz, rooty, thigh_joint, leg_joint, foot_joint)
START = {"q": [0.0, 1.25, 0.02, -0.5, -0.5, 0.1], "v": [0.3, 0.0, -0.2, 0.5, 0.0, 0.0]}


def rl_python(args):
    # gymnasium.envs.mujoco, not only gymnasium: the MuJoCo environments import the extra's imageio
    probe = "import gymnasium, gymnasium.envs.mujoco, mujoco; assert gymnasium.__version__ == '1.4.0'"
    if args.rl_python:
        return args.rl_python
    venv = args.work / "rl-venv"
    py = venv / "bin" / "python"
    if py.is_file() and subprocess.run([str(py), "-c", probe], capture_output=True).returncode == 0:
        return py
    if subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True).returncode != 0:
        print("hopper_policy_test.py: SKIP: cannot make a venv (python3-venv)")
        sys.exit(SKIP)
    pip = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--timeout", "30",
                          "--retries", "1", "gymnasium[mujoco]==1.4.0", "mujoco==4.0.1"], capture_output=True, text=True)
    if pip.returncode != 0:
        print(f"hopper_policy_test.py: SKIP: pip could not install gymnasium and mujoco: {pip.stderr.strip()[-300:]}")
        sys.exit(SKIP)
    return py


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steer", type=Path, required=True)
    p.add_argument("--rl-python", type=Path)
    p.add_argument("--work", type=Path, default=ROOT / "build" / "hopper_policy_test")
    p.add_argument("--cache", type=Path, default=ROOT / ".deps" / "standard-robots",
                   help="tools/standard_robots.py's cache of the pinned wheels")
    args = p.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    py = rl_python(args)
    suite = next(s for s in standard_robots.SUITES if s.key == "gymnasium")
    try:
        xml = standard_robots.fetch(suite, args.cache)["hopper.xml"]
    except standard_robots.Skip as e:
        print(f"hopper_policy_test.py: SKIP: {e}")
        return SKIP
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        tmp = Path(tmp)
        cfg = json.loads(hopper_policy.CONFIG.read_text())
        cfg["model"]["mjcf"] = str(xml)
        cfg["simulation"]["steps"] = 4 * ACTIONS
        cfg["batch"] = {"size": 1}
        cfg["initial_state"] = START
        cfg["controller"]["init"] = {"seed": 3, "gain": 0.3}
        for key in ("variables", "optimizer"):
            cfg.pop(key)
        cfg["validation"] = {"enabled": False}
        cfg["output"] = {"dir": str(tmp / "runs"), "trajectory_rollouts": 1}
        (tmp / "config.json").write_text(json.dumps(cfg))
        subprocess.run([str(args.steer), "run", str(tmp / "config.json")], check=True, stdout=subprocess.DEVNULL)
        folder = sorted((tmp / "runs").iterdir())[-1]
        spec, _ = hopper_policy.policy_spec(folder)
        (tmp / "policy.json").write_text(json.dumps(spec))
        with open(folder / "trajectory.csv") as f:
            reader = csv.reader(f)
            header = [h.rsplit("_", 1)[0] for h in next(reader)]
            rows = [dict(zip(header, map(float, r))) for r in reader]
        start = {k: v for k, v in rows[0].items() if k.endswith(".q") or k.endswith(".v")}
        (tmp / "start.json").write_text(json.dumps(start))
        subprocess.run([str(py), str(ROOT / "bench" / "peers" / "gymnasium_policy_eval.py"), "--policy",
                        str(tmp / "policy.json"), "--episodes", "1", "--start", str(tmp / "start.json"),
                        "--record", str(ACTIONS), "--json", str(tmp / "eval.json")], check=True,
                       stdout=subprocess.DEVNULL)
        record = json.loads((tmp / "eval.json").read_text())["record"]
        # MuJoCo's qpos / qvel order for Hopper: rootx, rootz, rooty, thigh, leg, foot
        joints = ["rootx", "rootz", "rooty", "thigh_joint", "leg_joint", "foot_joint"]
        worst, where = 0.0, None
        moved = max(abs(rows[4 * ACTIONS][f"controller.held.{a}"]) for a in
                    [h[len("controller.held."):] for h in header if h.startswith("controller.held.")])
        for i in range(1, ACTIONS + 1):
            for j, name in enumerate(joints):
                for part, arr in (("q", "qpos"), ("v", "qvel")):
                    d = abs(rows[4 * i][f"{name}.{part}"] - record[i - 1][arr][j])
                    if d > worst:
                        worst, where = d, f"{name}.{part} after action {i}"
    print(f"hopper_policy_test.py: {ACTIONS} actions, largest |steer - MuJoCo| {worst:.3g} ({where}); "
          f"largest applied action {moved:.3f}")
    if len(record) != ACTIONS or worst > TOL or moved < 1e-3:
        print(f"hopper_policy_test.py: FAIL (tolerance {TOL}, actions recorded {len(record)})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
