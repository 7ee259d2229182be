#!/usr/bin/env python3
"""steer's articulated dynamics against Pinocchio (PyPI `pin`), the Carpentier–Mansard library, on
the repository's Panda (configs/mjcf/panda.xml) and URDF arm (configs/mjcf/three_link.urdf).

Each model is read twice from the same file: by steer (model.mjcf / model.urdf, through MuJoCo's
compiler) and by Pinocchio's own parser (buildModelFromMJCF / buildModelFromUrdf). At N random
states and torques (q within 90 % of each joint's range, q̇ in ±2 rad/s or m/s, τ in ±5 N·m or N),
steer's one-step map x⁺ = f(x, u) (Simulator.step) and its exact Jacobians, row by row from the
hand adjoint (Simulator.step_vjp with unit vectors), give the dynamics quantities, which are
compared with Pinocchio's:

  steer's euler step with the joint damping D off is semi-implicit Euler,
      v⁺ = v + h q̈(q, v, τ),   q⁺ = q + h v⁺,   q̈ = M(q)⁻¹ (τ − c(q, v)),
  so (h the step, 2 ms)
      q̈        = (v⁺ − v) / h                        vs  pin.aba
      ∂q̈/∂τ    = (∂v⁺/∂u) / h = M⁻¹                   vs  computeABADerivatives' Minv
      M(q)      = inverse of the above                vs  pin.crba (armature on the diagonal)
      c(q, v)   = τ − M q̈                             vs  pin.rnea(q, v, 0) (nonLinearEffects)
      ∂q̈/∂q    = (∂v⁺/∂q) / h                         vs  ddq_dq
      ∂q̈/∂q̇   = (∂v⁺/∂v − I) / h                     vs  ddq_dv
  and with the file's damping on, steer's law (M + h D) v⁺ = M v + h (τ − c) is checked whole:
      x⁺ against Pinocchio's M and c put through the same law.

Each quantity passes when max |steer − pin| ≤ tol · max |pin| over its entries, tol = 1e-11
(round-off of the two libraries' algorithms: the (v⁺ − v)/h quotient costs about eps·|v|/(h|q̈|),
1e-14 here). A continuous URDF joint is an angle in steer and (cos, sin) in Pinocchio; its tangent
derivative is the angle's.

The timing part (--time) states Pinocchio's Python API (aba, computeABADerivatives per call)
beside steer's per-step Python API (step, step_vjp over a batch, per row); these are not the
C++ ratio, which bench/pinocchio_step.cpp measures.

Usage: pinocchio_crosscheck.py --steer-python BUILD/python --work BUILD/crosscheck
       [--states 100] [--seed 42] [--time] [--markdown F] [--json F]
Exit 0: every quantity within tolerance; 1: one is not; 77: skipped (no pin, no steer module).
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_venv  # noqa: E402

TAG = "pinocchio_crosscheck.py"
ROOT = Path(__file__).resolve().parents[2]
PIN_REQUIREMENTS = ["pin==4.1.0", "numpy"]
TOL = 1e-11
DT = 0.002  # [s]

# the two models: steer's config (model key) and Pinocchio's parser of the same file
MODELS = {
    "panda": {"file": "mjcf/panda.xml", "key": "mjcf", "parser": "mjcf"},
    "three_link_urdf": {"file": "mjcf/three_link.urdf", "key": "urdf", "parser": "urdf"},
}


def steer_config(name, damping):
    spec = MODELS[name]
    model = {"type": "articulated", spec["key"]: spec["file"], "integrator": "euler",
             "joint_limits": {"enabled": False}, "torque_limits": {"enabled": False}}
    if not damping:
        model["all_joints"] = {"damping": 0}
    return {
        "name": f"pinocchio_crosscheck_{name}",
        "model": model,
        "simulation": {"dt": DT, "steps": 1, "precision": "float64"},
        "loss": {"terminal": [{"state": f"{first_joint(name)}.q", "target": 0}]},
        "optimizer": {"method": "none"},
        "validation": {"enabled": False},
    }


def first_joint(name):
    return {"panda": "joint1", "three_link_urdf": "waist"}[name]


class PinModel:
    """Pinocchio's model of the file, with steer's joint order and coordinates: q_steer holds one
    angle per continuous joint where Pinocchio holds (cos, sin)."""

    def __init__(self, pin, name):
        spec = MODELS[name]
        path = str(ROOT / "configs" / spec["file"])
        self.model = pin.buildModelFromMJCF(path) if spec["parser"] == "mjcf" else pin.buildModelFromUrdf(path)
        self.data = self.model.createData()
        self.pin = pin
        self.joints = [j for j in self.model.joints][1:]
        self.names = list(self.model.names)[1:]
        self.nv = self.model.nv

    def q_pin(self, q_steer):
        import numpy as np
        out = []
        for j, qs in zip(self.joints, q_steer):
            if j.nq == 2:  # continuous (unbounded revolute): (cos, sin)
                out += [np.cos(qs), np.sin(qs)]
            else:
                out.append(qs)
        return np.array(out)

    def limits(self):
        """Per steer coordinate (lower, upper); ±π for a continuous joint."""
        import numpy as np
        lo, hi = [], []
        for j in self.joints:
            if j.nq == 2:
                lo.append(-np.pi), hi.append(np.pi)
            else:
                lo.append(self.model.lowerPositionLimit[j.idx_q])
                hi.append(self.model.upperPositionLimit[j.idx_q])
        return np.array(lo), np.array(hi)

    def quantities(self, q, v, tau):
        import numpy as np
        pin, m, d = self.pin, self.model, self.data
        qp = self.q_pin(q)
        qdd = pin.aba(m, d, qp, v, tau).copy()
        M = pin.crba(m, d, qp).copy()
        M = np.triu(M) + np.triu(M, 1).T  # crba fills the upper triangle
        c = pin.rnea(m, d, qp, v, np.zeros(m.nv)).copy()
        pin.computeABADerivatives(m, d, qp, v, tau)
        Minv = np.triu(d.Minv) + np.triu(d.Minv, 1).T
        return {"qdd": qdd, "M": M, "c": c, "Minv": Minv, "ddq_dq": d.ddq_dq.copy(),
                "ddq_dv": d.ddq_dv.copy()}


def random_inputs(rng, pm, n):
    lo, hi = pm.limits()
    mid, half = 0.5 * (lo + hi), 0.45 * (hi - lo)
    q = mid + half * rng.uniform(-1, 1, (n, pm.nv))
    v = rng.uniform(-2, 2, (n, pm.nv))
    tau = rng.uniform(-5, 5, (n, pm.nv))
    return q, v, tau


def steer_jacobians(sim, x, u, theta):
    """∂x⁺/∂x (n, nx, nx) and ∂x⁺/∂u (n, nx, nu) at n points, one step_vjp row per output."""
    import numpy as np
    n, nx = x.shape
    nu = u.shape[1]
    eye = np.eye(nx)
    rows_x = np.repeat(x, nx, axis=0)
    rows_u = np.repeat(u, nx, axis=0)
    rows_t = np.repeat(theta, nx, axis=0)
    adj = np.tile(eye, (n, 1))
    ax, au, _ = sim.step_vjp(rows_x, rows_u, rows_t, adj)
    return ax.reshape(n, nx, nx), au.reshape(n, nx, nu)


def rel_err(a, b):
    import numpy as np
    scale = max(float(np.max(np.abs(b))), 1e-300)
    return float(np.max(np.abs(a - b))) / scale


def check_model(steer, pin, name, n, seed):
    import numpy as np
    pm = PinModel(pin, name)
    sim = steer.load(steer_config(name, damping=False), base_dir=str(ROOT / "configs"))
    info = sim._core._info
    nq = nv = pm.nv
    if sim.nx != nq + nv or sim.nu != nv:
        raise SystemExit(f"{TAG}: {name}: steer has nx={sim.nx}, nu={sim.nu}; Pinocchio nv={nv}")
    steer_joints = [s[:-2] for s in info["state_names"][:nq]]
    if steer_joints != pm.names:
        raise SystemExit(f"{TAG}: {name}: joint order differs: steer {steer_joints}, Pinocchio {pm.names}")
    rng = np.random.default_rng(seed)
    q, v, tau = random_inputs(rng, pm, n)
    theta = np.repeat(sim.default_batch().theta[:1], n, axis=0)
    x = np.hstack([q, v])
    h = DT
    xn = sim.step(x, tau, theta)
    Jx, Ju = steer_jacobians(sim, x, tau, theta)
    worst = {k: 0.0 for k in ("qdd", "M", "c", "Minv", "ddq_dq", "ddq_dv", "step_damped")}
    for i in range(n):
        ref = pm.quantities(q[i], v[i], tau[i])
        vn = xn[i, nq:]
        qdd = (vn - v[i]) / h
        Minv = Ju[i, nq:, :] / h
        M = np.linalg.inv(Minv)
        c = tau[i] - M @ qdd
        ddq_dq = Jx[i, nq:, :nq] / h
        ddq_dv = (Jx[i, nq:, nq:] - np.eye(nv)) / h
        got = {"qdd": qdd, "M": M, "c": c, "Minv": Minv, "ddq_dq": ddq_dq, "ddq_dv": ddq_dv}
        for k, val in got.items():
            worst[k] = max(worst[k], rel_err(val, ref[k]))
    # the file's damping on: steer's law (M + h D) v⁺ = M v + h (τ − c), q⁺ = q + h v⁺, whole
    sim_d = steer.load(steer_config(name, damping=True), base_dir=str(ROOT / "configs"))
    xn_d = sim_d.step(x, tau, np.repeat(sim_d.default_batch().theta[:1], n, axis=0))
    D = np.diag(pm.model.damping)
    for i in range(n):
        ref = pm.quantities(q[i], v[i], tau[i])
        vp = np.linalg.solve(ref["M"] + h * D, ref["M"] @ v[i] + h * (tau[i] - ref["c"]))
        xp = np.concatenate([q[i] + h * vp, vp])
        worst["step_damped"] = max(worst["step_damped"], rel_err(xn_d[i], xp))
    # the comparison sees a 1e-6 change of the last body's mass (Pinocchio's model changed,
    # steer's not): a check that cannot fail would pass this too
    inertia = pm.model.inertias[pm.model.njoints - 1]
    inertia.mass = inertia.mass * (1 + 1e-6)
    pm.model.inertias[pm.model.njoints - 1] = inertia
    pm.data = pm.model.createData()
    sensitivity = rel_err(np.linalg.inv(Ju[0, nq:, :] / h), pm.quantities(q[0], v[0], tau[0])["M"])
    return {"model": name, "states": n, "nv": nv, "rel_err": worst,
            "mass_change_1e-6_seen_as": sensitivity,
            "damping": [float(d) for d in pm.model.damping],
            "armature": [float(a) for a in pm.model.armature],
            "pass": all(e <= TOL for e in worst.values()) and sensitivity > 10 * TOL}


def time_python(steer, pin, name, reps=2000):
    """Per-call seconds of Pinocchio's Python aba and computeABADerivatives, and of steer's Python
    step and step_vjp per row of a 1000-row batch (one thread)."""
    import numpy as np
    pm = PinModel(pin, name)
    rng = np.random.default_rng(7)
    q, v, tau = random_inputs(rng, pm, 1)
    qp = pm.q_pin(q[0])
    out = {}
    t0 = time.perf_counter()
    for _ in range(reps):
        pin.aba(pm.model, pm.data, qp, v[0], tau[0])
    out["pin_python_aba_us"] = (time.perf_counter() - t0) / reps * 1e6
    t0 = time.perf_counter()
    for _ in range(reps):
        pin.computeABADerivatives(pm.model, pm.data, qp, v[0], tau[0])
    out["pin_python_aba_derivatives_us"] = (time.perf_counter() - t0) / reps * 1e6
    sim = steer.load(steer_config(name, damping=True), base_dir=str(ROOT / "configs"))
    sim.threads = 1
    B = 1000
    x = np.repeat(np.hstack([q, v]), B, axis=0)
    u = np.repeat(tau, B, axis=0)
    th = np.repeat(sim.default_batch().theta[:1], B, axis=0)
    adj = np.ones_like(x)
    best_f = best_b = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        sim.step(x, u, th)
        best_f = min(best_f, time.perf_counter() - t0)
        t0 = time.perf_counter()
        sim.step_vjp(x, u, th, adj)
        best_b = min(best_b, time.perf_counter() - t0)
    out["steer_python_step_us_per_row"] = best_f / B * 1e6
    out["steer_python_step_vjp_us_per_row"] = best_b / B * 1e6
    return out


def markdown(results, timing, versions):
    lines = [f"# steer vs Pinocchio {versions['pin']} (tolerance {TOL:g} relative to max |Pinocchio|)", "",
             "| model | states | q̈ | M | c | M⁻¹ | ∂q̈/∂q | ∂q̈/∂q̇ | damped step | M with a 1e-6 mass change | pass |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        e = r["rel_err"]
        lines.append(f"| {r['model']} | {r['states']} | " +
                     " | ".join(f"{e[k]:.1e}" for k in ("qdd", "M", "c", "Minv", "ddq_dq", "ddq_dv", "step_damped")) +
                     f" | {r['mass_change_1e-6_seen_as']:.1e} | {'yes' if r['pass'] else 'NO'} |")
    if timing:
        lines += ["", "Python APIs, one thread (per call; not the C++ ratio, see bench/pinocchio_step.cpp):", ""]
        for model, t in timing.items():
            lines.append(f"- {model}: " + ", ".join(f"{k} {v:.2f}" for k, v in t.items()))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steer-python", type=Path, help="the build's python/ folder (steer's module)")
    ap.add_argument("--work", type=Path, required=True, help="scratch folder (the peers' venv goes here)")
    ap.add_argument("--states", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--time", action="store_true", help="also time the Python APIs")
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.states < 1:
        ap.error(f"--states: must be >= 1, got {args.states}")
    args.work.mkdir(parents=True, exist_ok=True)
    peer_venv.enter(TAG, args.work / "pinocchio-venv", PIN_REQUIREMENTS, ["pinocchio", "numpy"])
    steer = peer_venv.import_steer(TAG, args.steer_python)
    import pinocchio as pin
    results = [check_model(steer, pin, name, args.states, args.seed) for name in MODELS]
    timing = {name: time_python(steer, pin, name) for name in MODELS} if args.time else {}
    versions = {"pin": pin.__version__, "steer": steer.__version__}
    text = markdown(results, timing, versions)
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"tolerance": TOL, "dt": DT, "versions": versions,
                                         "results": results, "python_timing_us": timing}, indent=2) + "\n")
    return 0 if all(r["pass"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
