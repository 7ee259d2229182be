"""Times DiffTaichi's published examples/mass_spring.py (github.com/yuanming-hu/difftaichi) on
Taichi 1.7's CPU backend, importing it from a checkout without changing a line of it.

The published script (2020) is imported as a module: its kernels (compute_center, nn1, nn2,
apply_spring_force, advance_toi / advance_no_toi, compute_loss), its neural-network controller
(10 sinusoids + 4 inputs per particle + 2 goal inputs -> 32 tanh hidden units -> one tanh
actuation per spring), its robot setup, forward() and loss (-x of particle 0 at the last step)
run as published; 681 steps of 0.004 s in float32 (its `real = ti.f32`), one robot per run.
What this driver supplies, because Taichi 1.7 no longer has the 2020 API the script was
written against:
  - the field layout: the script's `@ti.layout` function (removed from Taichi) is recorded and
    replaced by the same fields placed with today's API (x, v, v_inc: [max_steps, n_objects]
    2-vectors; springs [n_springs]; weights1 [32, n_inputs]; bias1 [32]; weights2
    [n_springs, 32]; bias2 [n_springs]; hidden [max_steps, 32]; act [max_steps, n_springs];
    center [max_steps]; loss, goal scalars; gradients for all);
  - ti.Tape -> ti.ad.Tape; a do-nothing ti.GUI (the script opens a window at import; forward
    is called with visualize=False); empty stand-ins for the plotting imports (scipy's
    gaussian_filter, matplotlib), which the timed code never calls; sys.argv = [robot, task];
  - ti.init gets cpu_max_num_threads (--threads) and arch=cpu.
The weights are initialized as the script's optimize() does (np.random.seed(0) draws).
Timing: one warm-up call (JIT compilation, reported apart), then forward-only calls
(clear(); forward(visualize=False)) and forward+backward calls (clear(); with ti.ad.Tape(loss):
forward(visualize=False)) repeated until --min-time seconds; best and median wall and CPU time.

With --train N the driver then runs the script's own optimize() loop (normalized gradient
steps of 0.2, N iterations; the script's 100 unless given) from those weights and writes, to
--train-out, the loss of every iteration, the time per iteration, and the initial weights in
steer's controller weight-file layout ({"layers": [{"weight", "bias"}, …]}, the observations in
the script's order: 10 phases, then per particle (x − c)·0.05, (y − c)·0.05, v_x·0.05, v_y·0.05,
then the goal's offset from the centre), for steer's side of the comparison.

  difftaichi_upstream.py --difftaichi /path/to/difftaichi [--robot 0] [--toi 1] [--threads 1]
                         [--train N --train-out curve.json]
"""
import argparse
import importlib
import json
import math
import os
import statistics
import sys
import time
import types


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--difftaichi", required=True, help="a checkout of github.com/yuanming-hu/difftaichi")
    ap.add_argument("--robot", type=int, default=0)
    ap.add_argument("--toi", type=int, default=1, help="1: advance_toi (the script's train task), 0: advance_no_toi")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--train", type=int, default=0, help="iterations of the script's optimize() loop")
    ap.add_argument("--train-out", help="with --train: where the loss curve and initial weights go")
    args = ap.parse_args()
    if args.train > 0 and not args.train_out:
        ap.error("--train needs --train-out")

    import numpy as np
    import taichi as ti

    # the 2020 API the script uses, mapped onto Taichi 1.7
    deferred_layout = []
    ti.layout = lambda f: deferred_layout.append(f) or f
    ti.Tape = ti.ad.Tape

    class NoGUI:
        def __init__(self, *a, **k):
            pass

        def __getattr__(self, name):
            return lambda *a, **k: None

    ti.GUI = NoGUI
    real_init = ti.init
    ti.init = lambda **kw: real_init(arch=ti.cpu, cpu_max_num_threads=args.threads, **kw)
    for name in ("scipy", "scipy.ndimage", "scipy.ndimage.filters", "matplotlib", "matplotlib.pyplot"):
        sys.modules[name] = types.ModuleType(name)
    sys.modules["scipy.ndimage.filters"].gaussian_filter = None
    sys.modules["matplotlib"].pyplot = sys.modules["matplotlib.pyplot"]

    examples = os.path.join(args.difftaichi, "examples")
    sys.path.insert(0, examples)
    sys.argv = ["mass_spring.py", str(args.robot), "train"]
    ms = importlib.import_module("mass_spring")
    rc = importlib.import_module("mass_spring_robot_config")

    objects, springs = rc.robots[args.robot]()
    ms.n_objects, ms.n_springs = len(objects), len(springs)
    vec_fields = [ms.x, ms.v, ms.v_inc]
    ti.root.dense(ti.ij, (ms.max_steps, ms.n_objects)).place(*vec_fields)
    ti.root.dense(ti.i, ms.n_springs).place(ms.spring_anchor_a, ms.spring_anchor_b, ms.spring_length,
                                            ms.spring_stiffness, ms.spring_actuation)
    ti.root.dense(ti.ij, (ms.n_hidden, ms.n_input_states())).place(ms.weights1)
    ti.root.dense(ti.i, ms.n_hidden).place(ms.bias1)
    ti.root.dense(ti.ij, (ms.n_springs, ms.n_hidden)).place(ms.weights2)
    ti.root.dense(ti.i, ms.n_springs).place(ms.bias2)
    ti.root.dense(ti.ij, (ms.max_steps, ms.n_hidden)).place(ms.hidden)
    ti.root.dense(ti.ij, (ms.max_steps, ms.n_springs)).place(ms.act)
    ti.root.dense(ti.i, ms.max_steps).place(ms.center)
    ti.root.place(ms.loss, ms.goal)
    ti.root.lazy_grad()
    ms.setup_robot(objects, springs)
    ms.use_toi = bool(args.toi)
    if args.train > 0:
        return train(args, ms, np)
    # the script's optimize(): weight initialization
    nin = ms.n_input_states()
    for i in range(ms.n_hidden):
        for j in range(nin):
            ms.weights1[i, j] = np.random.randn() * math.sqrt(2 / (ms.n_hidden + nin)) * 2
    for i in range(ms.n_springs):
        for j in range(ms.n_hidden):
            ms.weights2[i, j] = np.random.randn() * math.sqrt(2 / (ms.n_hidden + ms.n_springs)) * 3

    def run_fwd():
        ms.clear()
        ms.forward(visualize=False)
        ti.sync()

    def run_fwd_bwd():
        ms.clear()
        with ti.ad.Tape(ms.loss):
            ms.forward(visualize=False)
        ti.sync()

    t0 = time.perf_counter()
    run_fwd_bwd()
    first_s = time.perf_counter() - t0
    loss0 = float(ms.loss[None])

    def timed(fn):
        fn()
        ws, cs = [], []
        while sum(ws) < args.min_time or len(ws) < args.min_reps:
            c0 = time.process_time()
            t1 = time.perf_counter()
            fn()
            ws.append(time.perf_counter() - t1)
            cs.append(time.process_time() - c0)
        return {"best_s": min(ws), "median_s": statistics.median(ws), "reps": len(ws), "cpu_best_s": min(cs)}

    fwd = timed(run_fwd)
    fb = timed(run_fwd_bwd)
    out = {
        "peer": "difftaichi mass_spring.py (published, imported unmodified)",
        "taichi": ".".join(map(str, ti.__version__)),
        "robot": args.robot, "toi": bool(args.toi), "threads": args.threads, "precision": "float32",
        "n_objects": ms.n_objects, "n_springs": ms.n_springs, "n_hidden": ms.n_hidden, "n_inputs": nin,
        "steps": ms.steps, "dt": ms.dt, "first_call_s": first_s, "loss": loss0,
        "weights1_grad_norm": float(np.linalg.norm(ms.weights1.grad.to_numpy())),
        "forward": fwd, "forward_backward": fb,
    }
    text = json.dumps(out, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


def train(args, ms, np):
    """The script's optimize() itself, its iteration count patched to args.train (range is looked
    up in its module globals), with the initial weights recovered by replaying its draws from
    numpy's state before the call (forward() draws from Python's random, not numpy's)."""
    state = np.random.get_state()
    builtin_range = range
    ms.range = lambda *a: builtin_range(args.train) if a == (100,) else builtin_range(*a)
    t0 = time.perf_counter()
    losses = ms.optimize(toi=bool(args.toi), visualize=False)
    wall = time.perf_counter() - t0
    np.random.set_state(state)
    nin, nh, ns = ms.n_input_states(), ms.n_hidden, ms.n_springs
    w1 = [[np.random.randn() * math.sqrt(2 / (nh + nin)) * 2 for _ in builtin_range(nin)] for _ in builtin_range(nh)]
    w2 = [[np.random.randn() * math.sqrt(2 / (nh + ns)) * 3 for _ in builtin_range(nh)] for _ in builtin_range(ns)]
    out = {
        "peer": "difftaichi mass_spring.py optimize() (published, imported unmodified)",
        "taichi": ".".join(map(str, __import__("taichi").__version__)),
        "robot": args.robot, "toi": bool(args.toi), "threads": args.threads, "iterations": args.train,
        "losses": [float(v) for v in losses], "wall_s": wall, "per_iteration_s": wall / args.train,
        "note": "the first iteration includes the kernels' JIT compilation",
        "weights": {"layers": [{"weight": w1, "bias": [0.0] * nh}, {"weight": w2, "bias": [0.0] * ns}]},
    }
    with open(args.train_out, "w") as f:
        json.dump(out, f)
    print(json.dumps({k: v for k, v in out.items() if k != "weights"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
