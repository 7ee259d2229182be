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
The first forward+backward call's loss and gradient (all weights and biases, in steer's variable
order) are written out. Timing: one warm-up call (JIT compilation, reported apart), then
forward-only calls
(clear(); forward(visualize=False)) and forward+backward calls (clear(); with ti.ad.Tape(loss):
forward(visualize=False)) repeated until --min-time seconds; best and median wall and CPU time.

With --train N the driver then runs the script's own optimize() loop (normalized gradient
steps of 0.2, N iterations; the script's 100 unless given) from those weights and writes, to
--train-out, the loss of every iteration, the time per iteration, and the initial weights in
steer's controller weight-file layout ({"layers": [{"weight", "bias"}, …]}, the observations in
the script's order: 10 phases, then per particle (x − c)·0.05, (y − c)·0.05, v_x·0.05, v_y·0.05,
then the goal's offset from the centre; each value as the script's fields hold it: rounded to
float32 unless --precision float64), for steer's side of the comparison; --weights-out writes that weight file alone. The
time of every iteration is taken at the script's clear() calls (one per iteration); the first
includes the kernels' JIT compilation. Apart from the script's loop, the driver times one update
done the fast way (the same w -= 0.2 g/(|g| + 1e-6) on numpy copies of the fields, written
back): the script's own update reads and writes its ~1,500 weights one Python field access at a
time, which is not Taichi at its best.

  difftaichi_upstream.py --difftaichi /path/to/difftaichi [--robot 0] [--toi 1] [--threads 1]
                         [--precision float32|float64] [--seed S]
                         [--train N --train-out curve.json [--weights-out weights.json]]
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
    ap.add_argument("--seed", type=int, help="numpy's seed before the weights are drawn (default: the script's own "
                    "np.random.seed(0) at import)")
    ap.add_argument("--precision", choices=("float32", "float64"), default="float32",
                    help="float32: the script as published; float64: its `real` read as ti.f64")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--train", type=int, default=0, help="iterations of the script's optimize() loop")
    ap.add_argument("--train-out", help="with --train: where the loss curve and initial weights go")
    ap.add_argument("--weights-out", help="with --train: the initial weights alone, as a steer weight file")
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
    # --precision float64: the script's `real = ti.f32` (its fields' type and ti.init's
    # default_fp) read as ti.f64 while it is imported, nothing else changed
    single = ti.f32
    if args.precision == "float64":
        ti.f32 = ti.f64
    try:
        ms = importlib.import_module("mass_spring")
    finally:
        ti.f32 = single
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
    if args.seed is not None:
        np.random.seed(args.seed)
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
    launch = launch_cost(ti)
    out = {
        "peer": "difftaichi mass_spring.py (published, imported unmodified)",
        "taichi": ".".join(map(str, ti.__version__)),
        "robot": args.robot, "toi": bool(args.toi), "threads": args.threads, "precision": args.precision,
        "n_objects": ms.n_objects, "n_springs": ms.n_springs, "n_hidden": ms.n_hidden, "n_inputs": nin,
        "steps": ms.steps, "dt": ms.dt, "first_call_s": first_s, "loss": loss0,
        "weights1_grad_norm": float(np.linalg.norm(ms.weights1.grad.to_numpy())),
        # dL/dW at the initial weights, in steer's variable order (layer 0's weights row-major,
        # its biases, then layer 1's)
        "initial_gradient": [float(g) for f in (ms.weights1, ms.bias1, ms.weights2, ms.bias2)
                             for g in f.grad.to_numpy().ravel()],
        "forward": fwd, "forward_backward": fb,
        # the script launches 5 kernels per step forward (compute_center, nn1, nn2,
        # apply_spring_force, advance_toi) and their gradient kernels backward
        "kernel_launches_forward_backward": 2 * 5 * (ms.steps - 1),
        "empty_kernel_launch_s": launch,
    }
    if args.json:
        with open(args.json, "w") as f:
            f.write(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "initial_gradient"}, indent=1))
    return 0


def launch_cost(ti, reps=5000):
    """seconds per launch of a kernel that takes one i32 (as the script's per-step kernels do)
    and does nothing: the floor under each of the script's launches (best of 3 runs)"""

    @ti.kernel
    def nothing(t: ti.i32):
        pass

    nothing(0)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for i in range(reps):
            nothing(i)
        ti.sync()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def train(args, ms, np):
    """The script's optimize() itself, its iteration count patched to args.train (range is looked
    up in its module globals), with the initial weights recovered by replaying its draws from
    numpy's state before the call (forward() draws from Python's random, not numpy's)."""
    state = np.random.get_state()
    builtin_range = range
    ms.range = lambda *a: builtin_range(args.train) if a == (100,) else builtin_range(*a)
    marks = []
    script_clear = ms.clear

    def clear_marked():
        marks.append(time.perf_counter())
        script_clear()

    ms.clear = clear_marked
    t0 = time.perf_counter()
    losses = ms.optimize(toi=bool(args.toi), visualize=False)
    wall = time.perf_counter() - t0
    ms.clear = script_clear
    marks.append(t0 + wall)
    per_iteration = [b - a for a, b in zip(marks, marks[1:])]
    np.random.set_state(state)
    nin, nh, ns = ms.n_input_states(), ms.n_hidden, ms.n_springs
    as_field = (lambda v: float(np.float32(v))) if args.precision == "float32" else float
    w1 = [[as_field(np.random.randn() * math.sqrt(2 / (nh + nin)) * 2) for _ in builtin_range(nin)] for _ in builtin_range(nh)]
    w2 = [[as_field(np.random.randn() * math.sqrt(2 / (nh + ns)) * 3) for _ in builtin_range(nh)] for _ in builtin_range(ns)]
    weights = {"layers": [{"weight": w1, "bias": [0.0] * nh}, {"weight": w2, "bias": [0.0] * ns}]}
    later = sorted(per_iteration[1:]) or per_iteration
    out = {
        "peer": "difftaichi mass_spring.py optimize() (published, imported unmodified)",
        "taichi": ".".join(map(str, __import__("taichi").__version__)),
        "robot": args.robot, "toi": bool(args.toi), "threads": args.threads, "precision": args.precision,
        "seed": 0 if args.seed is None else args.seed, "iterations": args.train,
        "losses": [float(v) for v in losses], "wall_s": wall,
        "first_iteration_s": per_iteration[0], "iteration_s": per_iteration,
        "iteration_best_s": later[0], "iteration_median_s": later[len(later) // 2],
        "note": "iteration_s[0] includes the kernels' JIT compilation; best and median are over the others",
        "fast_update_s": time_fast_update(ms, np),
        "weights": weights,
    }
    with open(args.train_out, "w") as f:
        json.dump(out, f)
    if args.weights_out:
        with open(args.weights_out, "w") as f:
            json.dump(weights, f, indent=1)
            f.write("\n")
    print(json.dumps({k: v for k, v in out.items() if k not in ("weights", "iteration_s")}, indent=1))
    return 0


def time_fast_update(ms, np, reps=20):
    """The script's update, w -= 0.2 g/(|g| + 1e-6) over weights1, bias1, weights2, bias2, on numpy
    copies of the fields written back (best of reps; the weights are restored afterwards)."""
    fields = [ms.weights1, ms.bias1, ms.weights2, ms.bias2]
    saved = [f.to_numpy() for f in fields]
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        w = [f.to_numpy() for f in fields]
        g = [f.grad.to_numpy() for f in fields]
        scale = 0.2 / (math.sqrt(sum(float((x.astype(np.float64) ** 2).sum()) for x in g)) + 1e-6)
        for f, wi, gi in zip(fields, w, g):
            f.from_numpy(wi - scale * gi)
        best = min(best, time.perf_counter() - t)
    for f, s in zip(fields, saved):
        f.from_numpy(s)
    return best


if __name__ == "__main__":
    sys.exit(main())
