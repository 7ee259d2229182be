#!/usr/bin/env python3
"""A policy trained in steer that hops in MuJoCo: Gymnasium's Hopper-v5, its unmodified
hopper.xml, a feedback policy trained through steer's gradients over 16 worlds
(bench/configs/gymnasium_hopper_policy.json), then the same weights run in MuJoCo itself through
gymnasium.make("Hopper-v5"), and PPO (stable-baselines3, RL Zoo's Hopper settings) trained in
MuJoCo until it reaches the same return (docs/legged.md, "A policy trained in steer, run in
MuJoCo").

What it runs:
  1. fetches hopper.xml from the pinned gymnasium 1.4.0 wheel (tools/standard_robots.py's cache,
     .deps/standard-robots) unless there;
  2. `steer run` on the config (or reuses a run folder given with --run);
  3. the episode return in steer: the run's trajectory.csv (the trained policy from each world's
     start, 4,000 steps = 1,000 actions) scored with Gymnasium's Hopper-v5 rules: per action
     (x_after − x_before)/0.008 + 1 while healthy − 0.001 |a|², the episode ending at the first
     unhealthy state (torso height ≤ 0.7 m, |pitch| ≥ 0.2 rad, a joint's q or any v beyond ±100);
  4. the episode return in MuJoCo: bench/peers/gymnasium_policy_eval.py with --rl-python (a Python
     with gymnasium 1.4.0, mujoco, stable-baselines3 and torch), --episodes seeds;
  5. PPO: bench/peers/sb3_ppo.py to the MuJoCo mean return, --ppo-seeds seeds.
Writes <work>/hopper_policy.json and prints a summary. Exit 0 done, 2 usage error, 77 skipped
(no PyPI for the wheel, or --rl-python missing a package), 1 a step failed.

  hopper_policy.py [--steer build/steer] [--rl-python /venv/bin/python] [--work DIR]
                   [--run RUN_FOLDER] [--iterations N] [--episodes 20] [--ppo-seeds 1]
                   [--ppo-max-steps 1000000] [--skip-ppo]
"""
import argparse
import csv
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import standard_robots  # noqa: E402  (the pinned wheels and their cache)

CONFIG = ROOT / "bench" / "configs" / "gymnasium_hopper_policy.json"
SKIP = 77
FRAME_SKIP, TIMESTEP = 4, 0.002  # Hopper-v5's, and hopper.xml's option timestep [s]
GEAR = 200.0  # hopper.xml's motors: torque = 200 ctrl [N·m]
MOTORS = ("thigh_joint", "leg_joint", "foot_joint")  # its actuated joints (the root's are not)
HELD = "controller.held."


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    proc = subprocess.run([str(c) for c in cmd], **kw)
    if proc.returncode != 0:
        raise SystemExit(f"hopper_policy.py: {cmd[0]} exited {proc.returncode}")
    return proc


def hopper_xml():
    suite = next(s for s in standard_robots.SUITES if s.key == "gymnasium")
    try:
        return standard_robots.fetch(suite, ROOT / ".deps" / "standard-robots")["hopper.xml"]
    except standard_robots.Skip as e:
        print(f"hopper_policy.py: SKIP: {e}")
        sys.exit(SKIP)


def train(args, work, xml):
    cfg = json.loads(CONFIG.read_text())
    cfg["model"]["mjcf"] = str(xml)
    if args.iterations is not None:
        cfg["optimizer"]["iterations"] = args.iterations
    cfg["output"]["dir"] = str(work / "runs")
    path = work / "gymnasium_hopper_policy.json"
    path.write_text(json.dumps(cfg, indent=1))
    t0 = time.perf_counter()
    run([args.steer, "run", path])
    wall = time.perf_counter() - t0
    return sorted((work / "runs").iterdir())[-1], wall


def policy_spec(folder):
    """the controller as gymnasium_policy_eval.py reads it: observations, layers, σ, clamp"""
    art = json.loads((folder / "artifact.json").read_text())
    ctl = art["effective_config"]["controller"]
    weights = json.loads((folder / "controller_weights.json").read_text())
    acts = ctl["policy"]["activations"]
    layers = [dict(l, activation=acts[i]) for i, l in enumerate(weights["layers"])]
    obs = [{"state": o["observes"], "scale": o["scale"], "center": o["center"]} for o in ctl["observations"]]
    with open(folder / "trajectory.csv") as f:  # the controls, in order: the held actions' columns
        controls = [h.rsplit("_", 1)[0][len(HELD):] for h in next(csv.reader(f)) if h.startswith(HELD)]
    return {"observations": obs, "layers": layers, "action_scale": ctl["policy"]["action_scale"],
            "clamp": ctl["policy"]["clamp"], "controls": controls}, art


def steer_returns(folder):
    """Gymnasium's Hopper-v5 return of each recorded world's trajectory (the trained policy)"""
    rows = {}
    with open(folder / "trajectory.csv") as f:
        reader = csv.reader(f)
        header = next(reader)
        col = {name.rsplit("_", 1)[0]: i for i, name in enumerate(header)}
        for r in reader:
            rows.setdefault(int(r[0]), []).append([float(v) for v in r])
    q_names = [n for n in col if n.endswith(".q")]
    v_names = [n for n in col if n.endswith(".v")]
    held = [f"{HELD}torque.{j}" for j in MOTORS]
    episodes = []
    for world, traj in sorted(rows.items()):
        total, n = 0.0, 0
        for i in range(0, len(traj) - FRAME_SKIP, FRAME_SKIP):
            before, after = traj[i], traj[i + FRAME_SKIP]
            # the action held over these 4 steps, as MuJoCo's ctrl
            action = [traj[i + 1][col[h]] / GEAR for h in held]
            x_velocity = (after[col["rootx.q"]] - before[col["rootx.q"]]) / (FRAME_SKIP * TIMESTEP)
            z, angle = after[col["rootz.q"]], after[col["rooty.q"]]
            rest = [after[col[k]] for k in q_names if k not in ("rootx.q", "rootz.q")] + \
                   [after[col[k]] for k in v_names]
            healthy = z > 0.7 and -0.2 < angle < 0.2 and all(-100 < v < 100 for v in rest)
            total += x_velocity + (1.0 if healthy else 0.0) - 1e-3 * sum(a * a for a in action)
            n += 1
            if not healthy:
                break
        episodes.append({"world": world, "return": total, "length": n,
                         "x_final": traj[min(len(traj) - 1, n * FRAME_SKIP)][col["rootx.q"]]})
    returns = [e["return"] for e in episodes]
    mean = sum(returns) / len(returns)
    std = math.sqrt(sum((r - mean) ** 2 for r in returns) / len(returns))
    return {"episodes": episodes, "return_mean": mean, "return_std": std}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steer", type=Path, default=ROOT / "build" / "steer")
    p.add_argument("--rl-python", type=Path, default=Path(sys.executable))
    p.add_argument("--work", type=Path, default=ROOT / "build" / "hopper_policy")
    p.add_argument("--run", type=Path, help="a finished run folder of the config: skip the training")
    p.add_argument("--iterations", type=int)
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--ppo-seeds", type=int, default=1)
    p.add_argument("--ppo-max-steps", type=int, default=1_000_000)
    p.add_argument("--skip-ppo", action="store_true")
    args = p.parse_args(argv)
    if args.iterations is not None and args.iterations < 1:
        p.error("--iterations: at least 1")
    if args.episodes < 1 or args.ppo_seeds < 0 or args.ppo_max_steps < 1:
        p.error("--episodes and --ppo-max-steps: at least 1; --ppo-seeds: at least 0")
    probe = subprocess.run([str(args.rl_python), "-c", "import gymnasium, mujoco, stable_baselines3, torch"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"hopper_policy.py: SKIP: {args.rl_python} lacks gymnasium, mujoco, stable_baselines3 or torch "
              f"(pip install 'gymnasium[mujoco]==1.4.0' stable-baselines3 into a venv): {probe.stderr.strip()[-200:]}")
        return SKIP
    args.work.mkdir(parents=True, exist_ok=True)
    xml = hopper_xml()
    if args.run:
        folder, wall = args.run, None
    else:
        if not args.steer.is_file():
            p.error(f"--steer: {args.steer} is not there (build the CLI: cmake --build build --target steer_cli)")
        folder, wall = train(args, args.work, xml)
    spec, art = policy_spec(folder)
    (args.work / "policy.json").write_text(json.dumps(spec))
    opt = art["optimization"]
    window = opt["window"]
    B = art["effective_config"]["batch"]["size"]
    physics_steps = window["windows_run"] * window["steps"] * B
    summary = {"run": str(folder), "train_wall_s": wall, "optimization_seconds": opt.get("seconds"),
               "windows": window["windows_run"], "worlds": B, "window_steps": window["steps"],
               "resets": window["resets"],
               "steer_physics_steps_forward": physics_steps,
               "steer_env_steps": physics_steps // FRAME_SKIP,
               "steer_side": steer_returns(folder)}
    eval_json = args.work / "mujoco_eval.json"
    run([args.rl_python, ROOT / "bench" / "peers" / "gymnasium_policy_eval.py", "--policy",
         args.work / "policy.json", "--episodes", args.episodes, "--json", eval_json])
    summary["mujoco_side"] = json.loads(eval_json.read_text())
    target = summary["mujoco_side"]["return_mean"]
    summary["ppo"] = []
    if not args.skip_ppo:
        # the seeds side by side, one process (and one torch thread) each
        procs = []
        for seed in range(args.ppo_seeds):
            out = args.work / f"ppo_seed{seed}.json"
            cmd = [str(c) for c in (args.rl_python, ROOT / "bench" / "peers" / "sb3_ppo.py", "--target",
                                    f"{target:.3f}", "--max-steps", args.ppo_max_steps, "--seed", seed,
                                    "--json", out)]
            print("+", " ".join(cmd), flush=True)
            procs.append((subprocess.Popen(cmd), out))
        for proc, out in procs:
            if proc.wait() != 0:
                raise SystemExit(f"hopper_policy.py: sb3_ppo.py exited {proc.returncode}")
            summary["ppo"].append(json.loads(out.read_text()))
    (args.work / "hopper_policy.json").write_text(json.dumps(summary, indent=1))
    s, m = summary["steer_side"], summary["mujoco_side"]
    print(f"steer: {summary['windows']} windows x {B} worlds x {window['steps']} steps = "
          f"{physics_steps} physics steps ({physics_steps // FRAME_SKIP} env steps), "
          f"{summary['optimization_seconds']} s of optimization")
    print(f"return in steer  {s['return_mean']:.1f} ± {s['return_std']:.1f} ({len(s['episodes'])} worlds)")
    print(f"return in MuJoCo {m['return_mean']:.1f} ± {m['return_std']:.1f} ({len(m['episodes'])} episodes)")
    for r in summary["ppo"]:
        print(f"PPO seed {r['seed']}: {r['steps_to_target']} env steps to {r['target']:.1f} "
              f"({r['train_seconds']:.0f} s training)")
    print(f"wrote {args.work / 'hopper_policy.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
