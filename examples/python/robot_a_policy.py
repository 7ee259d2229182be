"""Train a feedback controller of your own, written in torch, through steer's step adjoint.

DiffTaichi's robot A (configs/difftaichi_robot_a.json) with raw actuation: at every step a torch
MLP reads the robot's state and a clock, and sets every spring's activation. The rollout is T calls
of steer.torch.step with the policy between them, so torch's autograd chains steer's hand adjoint
of each step with the network's own backward pass; Adam then updates the network's weights. The
controller's inputs follow DiffTaichi's mass_spring.py: sinusoids of the time at ten phases, and
every particle's offset from the centre of mass and its velocity. One weight vector is shared by
all B robots of the batch, each starting from a slightly different pose.

The loss is the config's: -(centre-of-mass x travel) over the horizon (unit particle masses).

    python examples/python/robot_a_policy.py [--iterations 40] [--batch 4] [--steps 300] [--out robot_a_policy.svg]
"""
import argparse
import json
import math
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
ap.add_argument("--iterations", type=int, default=40)
ap.add_argument("--batch", type=int, default=4, help="robots sharing the controller, each from a jittered pose")
ap.add_argument("--steps", type=int, default=300, help="horizon (the config's is 681)")
ap.add_argument("--hidden", type=int, default=32)
ap.add_argument("--lr", type=float, default=0.01)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--out", default="robot_a_policy.svg")
a = ap.parse_args()
torch.manual_seed(a.seed)

cfg = json.loads(pathlib.Path(a.config).read_text())
cfg["model"]["actuation"] = {"type": "raw"}  # the controls are the activations, set by the policy
cfg["simulation"]["steps"] = a.steps
cfg["batch"] = {"size": a.batch, "seed": a.seed + 1, "randomize": {"x0.particle.position": {"jitter": 0.005}}}
cfg.pop("variables", None)
cfg["optimizer"] = {"method": "none"}
cfg["validation"] = {"enabled": False}
sim = steer.load(cfg, base_dir=str(pathlib.Path(a.config).parent))
print(sim)
b = sim.default_batch()
n = sim.nx // 4  # 2D: positions (n, 2) then velocities (n, 2)
x0 = torch.as_tensor(b.x0)
theta = torch.as_tensor(b.theta)
phases = torch.arange(10, dtype=torch.float64) * (2 * math.pi / 10)
omega = 10.0  # rad/s, the sinusoid actuation's frequency in the config


def observe(x, k):
    """the clock's sinusoids, each particle's offset from the centre and its velocity"""
    p = x[:, :2 * n].reshape(-1, n, 2)
    v = x[:, 2 * n:].reshape(-1, n, 2)
    centre = p.mean(dim=1, keepdim=True)
    clock = torch.sin(omega * k * sim.dt + phases).expand(x.shape[0], -1)
    return torch.cat([clock, ((p - centre) / 0.1).reshape(x.shape[0], -1), v.reshape(x.shape[0], -1)], dim=1)


policy = torch.nn.Sequential(torch.nn.Linear(10 + 4 * n, a.hidden), torch.nn.Tanh(),
                             torch.nn.Linear(a.hidden, sim.nu), torch.nn.Tanh()).double()
opt = torch.optim.Adam(policy.parameters(), lr=a.lr)


def rollout():
    x = x0
    for k in range(sim.T):
        x = steer.torch.step(sim, x, policy(observe(x, k)), theta, k)
    travel = x[:, :2 * n].reshape(-1, n, 2)[:, :, 0].mean(dim=1) - x0[:, :2 * n].reshape(-1, n, 2)[:, :, 0].mean(dim=1)
    return -travel  # the config's loss: -(centre-of-mass x travel)


curve = []
for it in range(a.iterations + 1):
    loss = rollout()
    mean = float(loss.mean())
    curve.append(mean)
    if it % 10 == 0 or it == a.iterations:
        print(f"iteration {it:3d}  mean loss {mean:+.5f}  (travel {-mean:.4f} m)")
    if it == a.iterations:
        break
    opt.zero_grad()
    loss.mean().backward()
    opt.step()

# the engine's own rollout of the final controller's activations agrees with the chained steps
with torch.no_grad():
    x, us = x0, []
    for k in range(sim.T):
        u = policy(observe(x, k))
        us.append(u)
        x = steer.torch.step(sim, x, u, theta, k)
    r = sim.rollout(b.x0, torch.stack(us, dim=1).numpy(), b.theta)
    print(f"engine rollout of the final activations: mean loss {r.loss.mean():.10g}")
print(f"loss {curve[0]:.10g} -> {curve[-1]:.10g}")
line_chart(a.out, {"mean loss": (list(range(len(curve))), curve)},
           title="robot A, torch MLP controller through steer.torch.step", xlabel="Adam iteration",
           ylabel="mean loss (-travel, m)")
print(f"wrote {a.out}")
