"""System identification: fit the Panda arm's link masses to a measured free swing with scipy's
L-BFGS-B on steer's exact gradients.

The "measurement" is steer's own swing of configs/panda_free_swing.json with the true masses
(states every 0.1 s). The fit is multiple shooting: each 0.1 s segment starts at the measured state
and its loss is the config's terminal loss 1/2 sum_i (x_T[i] - measured_i)^2 over every joint
angle and velocity at the segment's end, so one steer.Simulator per segment (its targets differ)
and the total loss and dL/d(masses) are sums over segments. The start is every mass scaled by
1.3 (bounds 0.3x .. 3x). Prints the loss per iteration, the fitted masses against the true ones,
and saves the loss curve as an SVG.

    python examples/python/panda_sysid.py [--segments 5] [--out panda_sysid.svg]
"""
import argparse
import json
import pathlib
import sys

import numpy as np
from scipy.optimize import minimize

import steer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from svg_plot import line_chart  # noqa: E402

root = pathlib.Path(__file__).resolve().parents[2]
ap = argparse.ArgumentParser()
ap.add_argument("--config", default=str(root / "configs" / "panda_free_swing.json"))
ap.add_argument("--segments", type=int, default=5)
ap.add_argument("--segment-steps", type=int, default=50, help="steps per segment (dt 2 ms)")
ap.add_argument("--start-scale", type=float, default=1.3)
ap.add_argument("--out", default="panda_sysid.svg")
a = ap.parse_args()
base_dir = str(pathlib.Path(a.config).parent)
cfg = json.loads(pathlib.Path(a.config).read_text())

# the measured swing: the true masses, states every segment_steps steps
swing = dict(cfg, simulation=dict(cfg["simulation"], steps=a.segments * a.segment_steps))
truth = steer.load(swing, base_dir=base_dir)
mass = [i for i, n in enumerate(truth.param_names) if n.endswith(".mass")]
theta_true = truth.theta.copy()
meas = truth.rollout(truth.x0[None], np.tile(truth.u, (1, truth.T, 1)), theta_true[None],
                     trajectory_stride=a.segment_steps).trajectory[0]
print(f"{truth.model}: {len(mass)} link masses, {a.segments} segments of {a.segment_steps} steps")

# one simulator per segment: its terminal targets are the measured state at the segment's end
segs = []
for j in range(a.segments):
    c = dict(cfg, simulation=dict(cfg["simulation"], steps=a.segment_steps))
    c["loss"] = {"terminal": [{"state": n, "target": float(meas[j + 1, i]), "weight": 1.0}
                              for i, n in enumerate(truth.state_names)]}
    s = steer.load(c, base_dir=base_dir)
    segs.append((s, meas[j][None].copy(), np.tile(s.u, (1, s.T, 1))))

history = []


def loss_and_grad(m: np.ndarray):
    theta = theta_true.copy()  # every slot but the masses is known
    theta[mass] = m
    L, g = 0.0, np.zeros(len(mass))
    for s, x0, u in segs:
        r = s.rollout(x0, u, theta[None], grad=True)
        L += float(r.loss[0])
        g += r.grad_theta[0, mass]
    history.append(L)
    return L, g


it_losses = []  # the loss after each iteration (the callback's)
m0 = theta_true[mass] * a.start_scale
bounds = [(0.3 * v, 3.0 * v) for v in theta_true[mass]]
res = minimize(loss_and_grad, m0, jac=True, method="L-BFGS-B", bounds=bounds,
               options={"maxiter": 200, "ftol": 1e-20, "gtol": 1e-12},
               callback=lambda xk: print(f"iteration {len(it_losses) + 1:3d}  loss {history[-1]:.6e}") or it_losses.append(history[-1]))
print(f"L-BFGS-B: {res.message} after {res.nit} iterations, {res.nfev} evaluations; loss {history[0]:.6e} -> {res.fun:.6e}")
# a mass whose gradient is exactly 0 at the start does not enter the motion (the fixed base):
# the swing cannot identify it, and it stays where it started
g0 = loss_and_grad(m0)[1]
history.pop()
print(f"{'link':>12} {'true [kg]':>10} {'start':>10} {'fitted':>10} {'rel. error':>11}")
for k, q in enumerate(mass):
    t = theta_true[q]
    note = "  (dL/dm = 0: not in the motion)" if g0[k] == 0 else ""
    print(f"{truth.param_names[q]:>12} {t:10.4f} {m0[k]:10.4f} {res.x[k]:10.4f} {abs(res.x[k] - t) / t:11.2e}{note}")
line_chart(a.out, {"loss": (list(range(len(history))), history)}, "Panda link masses by L-BFGS-B (steer gradients)",
           "evaluation", "sum of segment losses", log_y=True)
print(f"curve saved to {a.out}")
