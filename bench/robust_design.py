#!/usr/bin/env python3
"""One design for many worlds against one design per world (issue 40, robust morphology).

    robust_design.py STEER [--config configs/soft_walker_robust.json] [--out DIR] [--iterations N]

Runs `steer run` on the config, whose design variables are shared by the whole batch
(variables.<name>.shared), and on its per-rollout twin: the same worlds (the same batch draws of
mass and friction), every variable one per rollout, so each world optimizes its own design from
the same start. Both end with the config's perturbation check (every particle's mass scaled by
1 + r at the optimum). Then every design found (the shared one, and each world's own) is
simulated on --held-out new worlds drawn the same way (seeded here, the same worlds for every
design), in one more `steer run` without an optimizer. Prints the travel (−loss, metres) over
the worlds at the optimum, under each perturbation level with the narrow_valley labels, and on
the held-out worlds, as Markdown tables; writes the figures to DIR/robust_design.json.
"""
import argparse
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(steer, cfg, out, name):
    path = os.path.join(out, name + ".json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    folder = os.path.join(out, name)
    t0 = time.time()
    r = subprocess.run([steer, "run", path, "--out", folder, "--quiet"], capture_output=True, text=True)
    seconds = time.time() - t0
    if r.returncode not in (0, 1):  # 1: a gradient check failed, the run itself completed
        sys.exit(f"{name}: steer run exited {r.returncode}: {r.stderr[-800:]}")
    arts = sorted(glob.glob(os.path.join(folder, "*", "artifact.json")))
    with open(arts[-1]) as f:
        return json.load(f), seconds


def quantiles(xs):
    """mean and order statistics of the finite values, with how many were not finite"""
    bad = sum(1 for x in xs if x != x)
    xs = sorted(x for x in xs if x == x)
    if not xs:
        return {"mean": float("nan"), "min": float("nan"), "p10": float("nan"), "median": float("nan"),
                "max": float("nan"), "nonfinite": bad}
    q = lambda p: xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]  # noqa: E731 (nearest rank)
    return {"mean": statistics.fmean(xs), "min": xs[0], "p10": q(0.1), "median": q(0.5), "max": xs[-1],
            "nonfinite": bad}


def figures(art):
    """travel over the worlds at the optimum, and each perturbation level's"""
    B = art["effective_config"]["batch"]["size"]
    # a non-finite loss (a diverged world) is written null in the artifact: NaN travel here
    neg = lambda x: float("nan") if x is None else -x  # noqa: E731
    travel = [neg(r["loss_final"]) for r in art["result"]["rollouts"]]
    levels = []
    for lv in art["perturbation"]["levels"]:
        levels.append({"relative": lv["relative"],
                       "travel_mean": neg(lv["loss_mean"]),
                       "travel_first_rollouts": [neg(x) for x in lv["loss_first_rollouts"]],
                       "narrow_valley": lv["rollouts_labelled_narrow_valley"],
                       "worlds": B})
    return {"travel": quantiles(travel), "travel_worlds": travel, "perturbation": levels,
            "narrow_valley_total": art["perturbation"]["rollouts_labelled"]}


def npy(path):
    """a float64 C-order .npy file as a list of rows"""
    import ast
    import struct
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[8:10], "little")
    head = ast.literal_eval(raw[10:10 + n].decode("latin1"))
    rows, cols = head["shape"]
    vals = struct.unpack(f"<{rows * cols}d", raw[10 + n:10 + n + 8 * rows * cols])
    return [list(vals[r * cols:(r + 1) * cols]) for r in range(rows)]


def held_out(steer, base, designs, names, worlds, seed, out):
    """travel of each design (a row of values of the variables `names`) on `worlds` new worlds:
    every particle's mass within ±20 % of the config's, friction in [0.5, 1.5], drawn here"""
    rng = random.Random(seed)
    m0 = base["model"].get("particle_mass", 1.0)
    art = glob.glob(os.path.join(out, "shared", "*", "artifact.json"))
    with open(sorted(art)[-1]) as f:
        params = json.load(f)["initial"][0]["parameters"]
    masses = sorted(k for k in params if k.startswith("particle[") and k.endswith("].mass"))
    n_particles = len(masses)
    world_mass = [[m0 * (1 + rng.uniform(-0.2, 0.2)) for _ in range(n_particles)] for _ in range(worlds)]
    world_friction = [rng.uniform(0.5, 1.5) for _ in range(worlds)]
    cfg = json.loads(json.dumps(base))
    cfg["name"] = base["name"] + "_held_out"
    B = len(designs) * worlds
    sweep = {}
    for i, k in enumerate(masses):
        sweep["theta." + k] = [world_mass[w][i] for d in range(len(designs)) for w in range(worlds)]
    sweep["theta.ground.friction"] = [world_friction[w] for d in range(len(designs)) for w in range(worlds)]
    for j, name in enumerate(names):
        sweep[name] = [designs[d][j] for d in range(len(designs)) for w in range(worlds)]
    cfg["batch"] = {"size": B, "seed": 1, "sweep": sweep}
    cfg.pop("variables", None)
    cfg.pop("perturb", None)
    cfg["optimizer"] = {"method": "none"}
    cfg["validation"] = {"enabled": False}
    cfg["output"] = {"dir": "runs", "trajectory_rollouts": B, "trajectory_stride": cfg["simulation"]["steps"]}
    art, _ = run(steer, cfg, out, "held_out")
    loss = [r["loss_final"] for r in art["result"]["rollouts"]]
    return [[-loss[d * worlds + w] for w in range(worlds)] for d in range(len(designs))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("steer")
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "soft_walker_robust.json"))
    ap.add_argument("--out", default="robust_design_out")
    ap.add_argument("--iterations", type=int, default=0, help="override optimizer.iterations (0: the config's)")
    ap.add_argument("--held-out", type=int, default=64, help="new worlds each design is simulated on")
    ap.add_argument("--seed", type=int, default=2026, help="seed of the held-out worlds")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with open(a.config) as f:
        shared = json.load(f)
    if a.iterations > 0:
        shared["optimizer"]["iterations"] = a.iterations
    B = shared["batch"]["size"]
    shared["output"]["trajectory_rollouts"] = B  # every world's final loss in the artifact
    shared["output"]["trajectory_stride"] = shared["simulation"]["steps"]
    own = json.loads(json.dumps(shared))
    own["name"] = shared["name"] + "_per_rollout"
    for v in own["variables"].values():
        v.pop("shared", None)
    results = {}
    for name, cfg in (("shared", shared), ("per_rollout", own)):
        art, seconds = run(a.steer, cfg, a.out, name)
        results[name] = figures(art)
        results[name]["seconds"] = seconds
    # every design found, on the same held-out worlds: the shared one, then each world's own
    names, designs = None, []
    for name in ("shared", "per_rollout"):
        art = sorted(glob.glob(os.path.join(a.out, name, "*", "artifact.json")))[-1]
        folder = os.path.dirname(art)
        with open(art) as f:
            names = json.load(f)["result"]["gradient_file"]["variables"]
        rows = npy(os.path.join(folder, "variables.npy"))
        designs += rows[:1] if name == "shared" else rows
    travel = held_out(a.steer, shared, designs, names, a.held_out, a.seed, a.out)
    results["held_out"] = {"worlds": a.held_out, "seed": a.seed,
                           "shared": quantiles(travel[0]),
                           "per_rollout_pooled": quantiles([t for d in travel[1:] for t in d]),
                           "per_rollout_design_means": quantiles([statistics.fmean(d) for d in travel[1:]])}
    with open(os.path.join(a.out, "robust_design.json"), "w") as f:
        json.dump(results, f, indent=1)
    levels = [lv["relative"] for lv in results["shared"]["perturbation"]]
    head = "| design | travel at the optimum: mean / min / p10 / median [m] | " + " | ".join(
        f"mass {r:+.0%}: mean travel, narrow_valley" for r in levels) + " | run [s] |"
    print(head)
    print("|" + "---|" * (3 + len(levels)))
    for name, label in (("shared", f"one design shared by {B} worlds"), ("per_rollout", "one design per world")):
        r = results[name]
        t = r["travel"]
        cells = [f"{t['mean']:.4f} / {t['min']:.4f} / {t['p10']:.4f} / {t['median']:.4f}"]
        cells += [f"{lv['travel_mean']:.4f}, {lv['narrow_valley']}/{lv['worlds']}" for lv in r["perturbation"]]
        print(f"| {label} | " + " | ".join(cells) + f" | {r['seconds']:.1f} |")
    h = results["held_out"]
    print()
    print(f"On {h['worlds']} held-out worlds (seed {h['seed']}): travel [m], mean / min / p10 / median / max")
    print()
    print("| design | mean | min | p10 | median | max |")
    print("|---|---|---|---|---|---|")
    for label, q in ((f"one design shared by {B} worlds", h["shared"]),
                     (f"one design per world: all {B} designs x {h['worlds']} worlds pooled", h["per_rollout_pooled"]),
                     (f"one design per world: each design's mean over the worlds, across the {B} designs",
                      h["per_rollout_design_means"])):
        print(f"| {label} | {q['mean']:.4f} | {q['min']:.4f} | {q['p10']:.4f} | {q['median']:.4f} | {q['max']:.4f} |")


if __name__ == "__main__":
    main()
