#!/usr/bin/env python3
"""Full-horizon against windowed (truncated) gradients of a controller, on one task.

A policy trained over windows of W steps (truncated backpropagation through time, as SHAC
trains over short horizons) follows, per window j covering steps s_j .. e_j, the gradient of
    L_j = w_c (c(x_e) − c(x_s)),   x_s held constant (the state carried in from window j − 1),
summed over the windows: the adjoint is cut at every window start. With W = T it is the full
gradient of L = w_c (c(x_T) − c(x_0)). This script computes both from one forward pass of the
config's batch, with Simulator.step and Simulator.step_vjp (the model's hand adjoint, the
controller inside the step), for the controller's weights:
  - the check: the chained steps' loss and full gradient against Simulator.rollout's
    (grad=True), to 1e-9 relative;
  - per W: the cosine and norm ratio of the batch-mean gradient (what a shared policy
    follows) against the full one, the median of the per-rollout cosines, and the horizon
    analysis per window: each window's gradient norm and its adjoint's growth
    ‖λ_s‖ / ‖λ_e‖ over the window (the full horizon's growth for W = T).

  PYTHONPATH=build/python python3 bench/windowed_gradients.py \
      [--config configs/difftaichi_robot_a_controller.json] [--windows 681,227,136,68,34,17] \
      [--out windowed_gradients.json]

The loss must be the config's centre-of-mass displacement alone (loss.com_displacement on a
mass-spring robot); the script refuses other configs by name.
"""
import argparse
import json
import sys

import numpy as np

import steer


def com_gradient(sim, theta, axis):
    """∂c/∂x per rollout (B, nx): m_i / Σ m on particle i's position along the axis"""
    names = sim.state_names
    pos = [names.index(n) for n in names if n.endswith(f".position.{axis}") and n.startswith("particle[")]
    mass = np.stack([theta[:, sim.param_names.index(f"particle[{i}].mass")] for i in range(len(pos))], axis=1)
    g = np.zeros((theta.shape[0], sim.nx))
    g[:, pos] = mass / mass.sum(axis=1, keepdims=True)
    return g, pos


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="configs/difftaichi_robot_a_controller.json")
    ap.add_argument("--windows", help="comma-separated window lengths in steps (default: T, T/3, T/5, T/10, T/20, T/40)")
    ap.add_argument("--out", default="windowed_gradients.json")
    args = ap.parse_args()
    sim = steer.load(args.config)
    loss_cfg = sim.effective_config["loss"]
    com = loss_cfg.get("com_displacement")
    others = [k for k, v in loss_cfg.items() if k != "com_displacement" and
              not (k == "control_effort" and v.get("weight", 0) == 0)]
    if sim.model != "mass_spring" or com is None or others:
        sys.exit(f"windowed_gradients.py: --config: needs a mass_spring config whose loss is com_displacement alone "
                 f"(got model {sim.model}, loss terms {sorted(loss_cfg)})")
    T = sim.T
    windows = [T, T // 3, T // 5, T // 10, T // 20, T // 40] if not args.windows else \
        [int(w) for w in args.windows.split(",")]
    if any(w < 1 or w > T for w in windows):
        ap.error(f"--windows: each length must be in [1, {T}]")
    ctrl = [i for i, n in enumerate(sim.param_names) if n.startswith("controller.layer")]
    b = sim.default_batch()
    x0, u, th = np.asarray(b.x0, float), np.asarray(b.u, float), np.asarray(b.theta, float)
    w_c = float(com["weight"])
    dc, _ = com_gradient(sim, th, com["axis"])

    ref = sim.rollout(x0, u, th, grad=True)
    xs = [x0]
    for k in range(T):
        xs.append(sim.step(xs[-1], u[:, k], th, k))
    loss = w_c * ((dc * xs[T]).sum(axis=1) - (dc * xs[0]).sum(axis=1))
    loss_err = float(np.max(np.abs(loss - np.asarray(ref.loss)) / np.maximum(1e-12, np.abs(ref.loss))))

    def windowed(W):
        g = np.zeros_like(th)
        per_window = []
        for s in reversed(range(0, T, W)):
            e = min(s + W, T)
            lam = w_c * dc
            lam_end = np.linalg.norm(lam, axis=1)
            gw = np.zeros_like(th)
            for k in reversed(range(s, e)):
                lam, _, gth = sim.step_vjp(xs[k], u[:, k], th, lam, k)
                gw += gth
            g += gw
            per_window.append({"start": s, "end": e,
                               "gradient_norm_median": float(np.median(np.linalg.norm(gw[:, ctrl], axis=1))),
                               "adjoint_growth_median": float(np.median(np.linalg.norm(lam, axis=1) / lam_end)),
                               "adjoint_growth_max": float(np.max(np.linalg.norm(lam, axis=1) / lam_end))})
        return g[:, ctrl], per_window[::-1]

    full, _ = windowed(T)
    ref_ctrl = np.asarray(ref.grad_theta)[:, ctrl]
    grad_err = float(np.linalg.norm(full - ref_ctrl) / np.linalg.norm(ref_ctrl))
    print(f"{args.config}: B = {th.shape[0]}, T = {T}, {len(ctrl)} controller weights")
    print(f"check: chained steps vs rollout: loss {loss_err:.1e}, full gradient {grad_err:.1e} (relative)")
    if loss_err > 1e-9 or grad_err > 1e-9:
        sys.exit("windowed_gradients.py: the chained steps do not reproduce the rollout (tolerance 1e-9)")
    mean_full = full.mean(axis=0)
    rows = []
    print("   W  windows  cos(batch mean)  |g_W|/|g_T|  median per-rollout cos  window |g| median (first, last)  "
          "adjoint growth over a window: median, max")
    for W in windows:
        g, per_window = windowed(W)
        mean_w = g.mean(axis=0)
        cos = float(mean_w @ mean_full / (np.linalg.norm(mean_w) * np.linalg.norm(mean_full)))
        ratio = float(np.linalg.norm(mean_w) / np.linalg.norm(mean_full))
        per = [float(a @ c / (np.linalg.norm(a) * np.linalg.norm(c))) for a, c in zip(g, full)]
        growth_med = float(np.median([w["adjoint_growth_median"] for w in per_window]))
        growth_max = float(max(w["adjoint_growth_max"] for w in per_window))
        rows.append({"window": W, "windows": len(per_window), "cosine_batch_mean": cos, "norm_ratio": ratio,
                     "cosine_per_rollout_median": float(np.median(per)), "per_window": per_window})
        print(f"{W:4d} {len(per_window):8d} {cos:16.4f} {ratio:12.3f} {np.median(per):23.4f}  "
              f"{per_window[0]['gradient_norm_median']:14.3g}, {per_window[-1]['gradient_norm_median']:.3g}"
              f"{'':14s}{growth_med:10.3g}, {growth_max:.3g}")
    with open(args.out, "w") as f:
        json.dump({"config": args.config, "B": int(th.shape[0]), "T": T, "controller_weights": len(ctrl),
                   "check": {"loss": loss_err, "gradient": grad_err}, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
