#!/usr/bin/env python3
"""DiffTaichi's own task, reproduced: examples/mass_spring.py (robot 0, its train task) run
unmodified through bench/peers/difftaichi_upstream.py, and configs/difftaichi_mass_spring.json
run by steer from the same initial weights; the two loss curves side by side and the time per
iteration (forward + backward + update) of each.

  difftaichi_reproduction.py --difftaichi /path/to/difftaichi --taichi-python /venv/bin/python
                             [--steer build/steer] [--iterations 100] [--threads 1]
                             [--seeds 5] [--out difftaichi_reproduction.json]

Each precision, float64 then float32:
  1. the upstream driver's timing mode (loss and gradient at the initial weights, forward +
     backward best, JIT apart, the cost of an empty kernel launch) and its --train mode (the
     script's optimize() loop: losses, time of every iteration, the initial weights it drew, as
     its fields hold them). float32 is the script as published; float64 reads its
     `real = ti.f32` as ti.f64 (--precision float64 of the driver), nothing else changed;
  2. steer on the shipped config with those weights (controller.init.file) in the same
     precision, one thread, the optimizer logging every iteration;
  3. iteration 0 compared (loss and gradient from the same weights), then the curves iteration
     by iteration: |L_steer − L_upstream| against --tolerance (absolute, in m: the loss is −x_T
     of particle 0) and the first iteration past it.
Then, in float64, --seeds − 1 more initial draws (numpy seeded 1, 2, …), each trained by both
sides: the curves' second-half means and best losses, whose spread over draws is the scale a
single curve's divergence is measured against. And steer's float64 and float32 curves against
each other: what round-off alone does to this
task's training (its losses depend on whether particles land just before or after a step, so
a weight change of 1e-10 moves a later iteration's loss by millimetres).

Every figure printed is measured in this run. The JSON written to --out keeps both curves.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "difftaichi_mass_spring.json"
DRIVER = ROOT / "bench" / "peers" / "difftaichi_upstream.py"


def run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        sys.exit(f"difftaichi_reproduction.py: {' '.join(map(str, cmd))} exited {res.returncode}:\n"
                 f"{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    return res


def upstream_command(args, precision):
    return [args.taichi_python, DRIVER, "--difftaichi", args.difftaichi, "--threads", str(args.threads),
            "--precision", precision]


def upstream(args, work, precision):
    timing_json = work / f"upstream_timing_{precision}.json"
    run(upstream_command(args, precision) + ["--json", timing_json])
    return (json.loads(timing_json.read_text()),) + upstream_train(args, work, precision)


def upstream_train(args, work, precision, seed=None):
    """the script's optimize() loop from its own draw (seed None) or numpy seeded with seed"""
    tag = f"{precision}_{'script' if seed is None else seed}"
    train_json, weights = work / f"upstream_train_{tag}.json", work / f"weights_{tag}.json"
    extra = [] if seed is None else ["--seed", str(seed)]
    run(upstream_command(args, precision) + extra +
        ["--train", str(args.iterations), "--train-out", train_json, "--weights-out", weights])
    return json.loads(train_json.read_text()), weights


def steer_side(args, work, weights, precision):
    cfg = json.loads(CONFIG.read_text())
    cfg["controller"]["init"] = {"file": str(weights)}
    cfg["simulation"]["precision"] = precision
    cfg["simulation"]["threads"] = args.threads
    cfg["optimizer"]["iterations"] = args.iterations
    cfg["optimizer"]["log_every"] = 1
    cfg["validation"] = {"at": []}
    cfg["output"] = {"dir": str(work / f"runs_{precision}"), "trajectory_rollouts": 0}
    path = work / f"steer_{precision}.json"
    path.write_text(json.dumps(cfg))
    run([args.steer, "run", path])
    folder = sorted((work / f"runs_{precision}").iterdir())[-1]
    opt = json.loads((folder / "artifact.json").read_text())["optimization"]
    losses = [None] * args.iterations
    for it, l in zip(opt["history"]["iteration"], opt["history"]["loss_mean"]):
        if it < args.iterations:
            losses[it] = l
    return {"losses": losses, "seconds": opt["seconds"],
            "per_iteration_s": opt["seconds"] / max(1, opt["iterations"]),
            "initial_gradient": [float(g) for g in np.load(folder / "gradient_initial.npy").ravel()]}


def gradient_agreement(g_up, g_mine):
    """cosine and relative norm difference of two gradient vectors"""
    a, b = np.asarray(g_up), np.asarray(g_mine)
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    return {"cosine": cos, "norm_upstream": float(np.linalg.norm(a)), "norm_steer": float(np.linalg.norm(b)),
            "relative_difference": float(np.linalg.norm(a - b) / np.linalg.norm(a))}


def compare(up, mine, tol):
    diffs = [abs(a - b) for a, b in zip(up, mine) if b is not None]
    first_past = next((i for i, d in enumerate(diffs) if d > tol), None)
    return {"first_iteration_past_tolerance": first_past, "abs_diff": diffs}


def side_by_side(args, work, precision):
    """one precision: the upstream script and steer from the same weights"""
    timing, train, weights = upstream(args, work, precision)
    mine = steer_side(args, work, weights, precision)
    up = train["losses"]
    # DiffTaichi at its best: its forward + backward (Tape) and the update done on numpy copies
    up_best = timing["forward_backward"]["best_s"] + train["fast_update_s"]
    half = args.iterations // 2
    return {
        "precision": precision,
        "upstream": {"losses": up, "jit_first_call_s": timing["first_call_s"],
                     "forward_backward_best_s": timing["forward_backward"]["best_s"],
                     "published_iteration_median_s": train["iteration_median_s"],
                     "fast_update_s": train["fast_update_s"], "iteration_at_best_s": up_best,
                     "kernel_launches": timing["kernel_launches_forward_backward"],
                     "empty_kernel_launch_s": timing["empty_kernel_launch_s"], "taichi": train["taichi"],
                     "mean_loss_second_half": sum(up[half:]) / (args.iterations - half), "best_loss": min(up)},
        "steer": {"losses": mine["losses"], "per_iteration_s": mine["per_iteration_s"],
                  "mean_loss_second_half": sum(mine["losses"][half:]) / (args.iterations - half),
                  "best_loss": min(mine["losses"])},
        "initial_loss_difference": abs(up[0] - mine["losses"][0]),
        "initial_gradient": gradient_agreement(timing["initial_gradient"], mine["initial_gradient"]),
        "curve": compare(up, mine["losses"], args.tolerance),
        "ratio_at_best": up_best / mine["per_iteration_s"],
        "ratio_published_loop": train["iteration_median_s"] / mine["per_iteration_s"],
    }


def seed_spread(args, work, seeds):
    """float64, more initial draws (numpy seeds 1..seeds-1): each side's mean loss over the second
    half of its curve and its best loss, per seed"""
    half = args.iterations // 2
    rows = []
    for seed in range(1, seeds):
        train, weights = upstream_train(args, work, "float64", seed)
        mine = steer_side(args, work, weights, "float64")
        up, st = train["losses"], mine["losses"]
        rows.append({"seed": seed, "initial_loss_difference": abs(up[0] - st[0]),
                     "upstream_mean_second_half": sum(up[half:]) / (args.iterations - half),
                     "steer_mean_second_half": sum(st[half:]) / (args.iterations - half),
                     "upstream_best": min(up), "steer_best": min(st),
                     "first_iteration_past_tolerance": compare(up, st, args.tolerance)["first_iteration_past_tolerance"]})
    return rows


def report(r, args):
    u, m, g, c = r["upstream"], r["steer"], r["initial_gradient"], r["curve"]
    launches = u["kernel_launches"] * u["empty_kernel_launch_s"]
    print(f"== {r['precision']} ==")
    print(f"  iteration 0 (same weights): loss {m['losses'][0]:.12f} vs upstream {u['losses'][0]:.12f} "
          f"(|diff| {r['initial_loss_difference']:.2e} m); gradient |g| {g['norm_steer']:.6g} vs {g['norm_upstream']:.6g}, "
          f"|g - g_up|/|g_up| {g['relative_difference']:.2e}, 1 - cosine {1 - g['cosine']:.2e}")
    print(f"  curve: |diff| at iterations 1, 2, 3: " + ", ".join(f"{d:.2e}" for d in c["abs_diff"][1:4]) +
          f" m; first iteration past {args.tolerance:g} m: {c['first_iteration_past_tolerance']}; "
          f"mean loss over the second half {m['mean_loss_second_half']:.4f} vs {u['mean_loss_second_half']:.4f}, "
          f"best {m['best_loss']:.4f} vs {u['best_loss']:.4f}")
    print(f"  time per iteration: steer {m['per_iteration_s'] * 1e3:.2f} ms; upstream at its best "
          f"{u['iteration_at_best_s'] * 1e3:.1f} ms (forward+backward {u['forward_backward_best_s'] * 1e3:.1f} + update "
          f"{u['fast_update_s'] * 1e3:.2f}; its {u['kernel_launches']} launches cost at least {launches * 1e3:.0f} ms), "
          f"published loop {u['published_iteration_median_s'] * 1e3:.1f} ms; ratio {r['ratio_at_best']:.1f}x at its best, "
          f"{r['ratio_published_loop']:.1f}x the published loop; Taichi JIT + first call {u['jit_first_call_s']:.2f} s apart")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--difftaichi", required=True, help="a checkout of github.com/yuanming-hu/difftaichi")
    ap.add_argument("--taichi-python", required=True, help="a Python with taichi and numpy")
    ap.add_argument("--steer", default=str(ROOT / "build" / "steer"))
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tolerance", type=float, default=1e-4,
                    help="|L_steer - L_upstream| per iteration, m (default 1e-4)")
    ap.add_argument("--seeds", type=int, default=5,
                    help="initial draws in float64: the script's own and numpy seeds 1..N-1 (default 5)")
    ap.add_argument("--out", default="difftaichi_reproduction.json")
    args = ap.parse_args()
    if args.iterations < 2:
        ap.error("--iterations must be >= 2")
    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        results = [side_by_side(args, Path(tmp), p) for p in ("float64", "float32")]
        seeds = seed_spread(args, Path(tmp), args.seeds)
    for r in results:
        report(r, args)
    # what round-off alone does to this task: steer's own float64 and float32 curves
    roundoff = compare(results[0]["steer"]["losses"], results[1]["steer"]["losses"], args.tolerance)
    print(f"== round-off alone: steer float64 vs steer float32 ==\n  |diff| at iterations 0, 1, 2: " +
          ", ".join(f"{d:.2e}" for d in roundoff["abs_diff"][:3]) +
          f" m; first iteration past {args.tolerance:g} m: {roundoff['first_iteration_past_tolerance']}")
    if seeds:
        print("== float64, other initial draws (numpy seed): mean loss over the second half, best ==")
        for row in [{"seed": "script", "initial_loss_difference": results[0]["initial_loss_difference"],
                     "upstream_mean_second_half": results[0]["upstream"]["mean_loss_second_half"],
                     "steer_mean_second_half": results[0]["steer"]["mean_loss_second_half"],
                     "upstream_best": results[0]["upstream"]["best_loss"], "steer_best": results[0]["steer"]["best_loss"],
                     "first_iteration_past_tolerance": results[0]["curve"]["first_iteration_past_tolerance"]}] + seeds:
            print(f"  seed {row['seed']}: iteration 0 |diff| {row['initial_loss_difference']:.1e} m; first past "
                  f"{args.tolerance:g} m: {row['first_iteration_past_tolerance']}; second-half mean upstream "
                  f"{row['upstream_mean_second_half']:.4f}, steer {row['steer_mean_second_half']:.4f}; best "
                  f"{row['upstream_best']:.4f}, {row['steer_best']:.4f}")
        ups = [results[0]["upstream"]["mean_loss_second_half"]] + [x["upstream_mean_second_half"] for x in seeds]
        sts = [results[0]["steer"]["mean_loss_second_half"]] + [x["steer_mean_second_half"] for x in seeds]
        print(f"  over the {len(ups)} draws: upstream {statistics.mean(ups):.4f} ± {statistics.stdev(ups):.4f}, "
              f"steer {statistics.mean(sts):.4f} ± {statistics.stdev(sts):.4f} (mean ± sd of the second-half means)")
    print("iteration  upstream64  steer64   upstream32  steer32")
    for i in range(args.iterations):
        print(f"{i:9d} " + " ".join(f"{r[s]['losses'][i]:10.5f}" for r in results for s in ("upstream", "steer")))
    with open(args.out, "w") as f:
        json.dump({"iterations": args.iterations, "threads": args.threads, "tolerance_m": args.tolerance,
                   "sides": results, "steer_float64_vs_float32": roundoff, "float64_seeds": seeds}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
