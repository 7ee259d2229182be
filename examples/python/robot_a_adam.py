"""Optimize DiffTaichi robot A's actuation (its actuator weights and biases, the variables of
configs/difftaichi_robot_a.json) with torch's Adam through steer.torch, a batch of robots at once.

The loss is the config's: -(centre-of-mass x travel) over 681 steps of 4 ms, so a lower loss is a
robot that walks further right. Prints the loss every 10 steps and saves the curve as an SVG.

    python examples/python/robot_a_adam.py [--iterations 100] [--batch 4] [--out robot_a_adam.svg]
"""
import argparse
import pathlib
import sys

import numpy as np
import torch

import steer
import steer.torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from svg_plot import line_chart  # noqa: E402

root = pathlib.Path(__file__).resolve().parents[2]
ap = argparse.ArgumentParser()
ap.add_argument("--config", default=str(root / "configs" / "difftaichi_robot_a.json"))
ap.add_argument("--iterations", type=int, default=100)
ap.add_argument("--batch", type=int, default=4, help="robots optimized side by side (different random starts)")
ap.add_argument("--lr", type=float, default=0.05)
ap.add_argument("--steps", type=int, default=0, help="horizon override (0: the config's)")
ap.add_argument("--out", default="robot_a_adam.svg")
a = ap.parse_args()

import json  # noqa: E402
cfg = json.loads(pathlib.Path(a.config).read_text())
cfg["batch"] = dict(cfg.get("batch", {}), size=a.batch)
if a.steps:
    cfg["simulation"]["steps"] = a.steps
sim = steer.load(cfg, base_dir=str(pathlib.Path(a.config).parent))
print(sim)
b = sim.default_batch()
# the actuation: every θ slot of the actuator groups (weights and biases)
act = [i for i, n in enumerate(sim.param_names) if n.startswith("actuator")]
print(f"optimizing {len(act)} actuation slots of {sim.ntheta} parameters, B = {a.batch}")
x0 = torch.from_numpy(b.x0)
u = torch.from_numpy(b.u)
theta0 = torch.from_numpy(b.theta)
w = theta0[:, act].clone().requires_grad_()
opt = torch.optim.Adam([w], lr=a.lr)
curve = []
for it in range(a.iterations + 1):
    theta = theta0.clone()
    theta[:, act] = w
    loss = steer.torch.rollout(sim, x0, u, theta)
    curve.append(loss.detach().numpy().copy())
    if it % 10 == 0 or it == a.iterations:
        print(f"iteration {it:4d}  loss mean {loss.mean().item():+.6f}  best {loss.min().item():+.6f}")
    if it == a.iterations:
        break
    opt.zero_grad()
    loss.sum().backward()
    opt.step()
    with torch.no_grad():
        w.clamp_(-5.0, 5.0)  # the config's bounds on the actuation variables
c = np.array(curve)
line_chart(a.out, {f"robot {k}": (list(range(len(c))), list(c[:, k])) for k in range(c.shape[1])},
           "robot A: Adam on the actuation (steer.torch)", "iteration", "loss = -(CoM x travel) [m]")
print(f"loss {c[0].mean():+.6f} -> {c[-1].mean():+.6f} (mean over {a.batch} robots); curve saved to {a.out}")
