#!/usr/bin/env python3
"""steer's articulated model against Drake's MultibodyPlant (issue 42, part 2).

Both simulators load the same robot files: configs/mjcf/three_link.urdf (three hinges and a
prismatic wrist, joint damping, limits; steer through MuJoCo's compiler, Drake through its own
URDF parser) and, where Drake's MJCF parser reads it, configs/mjcf/panda.xml (7 hinges with
armature 0.1 kg m^2 and damping 1 N m s/rad). For each model and two torque sequences (zero
torque from a moving start; i.i.d. uniform torques within +-amp per joint) it checks:

1. Drake's law: at every state of Drake's own trajectory, Drake's discrete update equals the
   equation below evaluated with Drake's own M(q), C(q,v)v, tau_g(q) and D (one step, so round-off
   does not accumulate). This pins down Drake's semantics independently of steer.
2. Trajectories: steer's euler rollout and Drake's discrete plant over T = 250 steps of
   h = 2 ms (500 ms), max |q_steer - q_Drake| and |v_steer - v_Drake| after every step.
3. Gradients: L = 1/2 |q_T - q*|^2; dL/dx0 and dL/du_k (every step, every joint) from Drake's
   forward-mode AutoDiffXd (the state and the torques seeded with unit partials) against steer's
   adjoint grad_x0, grad_u of rollout(grad=True).
4. Timings (informational): steer's rollout on one thread against Drake's double simulation and
   AutoDiffXd gradients, medians of a few repeats.

The laws (step h, generalized positions q, velocities v, applied joint torques tau):
  steer `euler` (MuJoCo's Euler):  (M + h D) v+ = M v + h (tau + tau_g(q) - C(q,v) v),
                                   q+ = q + h v+,
  with M the joint-space inertia including the armature on its diagonal and D = diag(damping).
  Drake, discrete plant with the SAP solver (DiscreteContactApproximation kLagged, the default
  since Drake 1.37, set explicitly here): the "free-motion" velocity solves (M + h D)(v* - v)/h = k(q, v), where
  k = tau + tau_g - C v - D v gathers every non-constraint force evaluated at the step's start
  (joint damping is the only implicit term: h D is added to the articulated-body inertias of
  the forward dynamics) and M includes the joint actuators' reflected inertia; with no
  constraint in the SAP problem the solver returns v+ = v* exactly; then
  q+ = q + h N(q) v+ (N = I for hinges and slides). Expanding (M + hD)(v* - v) = h(... - D v)
  gives steer's equation term for term: the two laws are the same, and the difference is the
  round-off of two factorizations (Drake's articulated-body algorithm, steer's dense solve).
  Drake's TAMSI solver (the default up to Drake 1.36, deprecated since) takes the damping
  explicitly, M v+ = M v + h (tau + tau_g - C v - D v); it is run for information only.
  Joint limits: SAP adds a limit constraint for a joint only when the limit lies inside the
  window q +- 2 h max(|v|, |v*|) (+-0.006 rad at 1.5 rad/s), a compliant constraint of
  stiffness 1e12 and dissipation time scale h solved implicitly (TAMSI instead adds an explicit
  one-sided spring-damper force only beyond the limit); steer's smooth penalty acts
  everywhere (k_l w_l e^(-d/w_l) at a distance d inside the range). Both are switched off
  (Drake: position limits set to +-inf before Finalize; steer: model.joint_limits.enabled
  false), and the motion is kept well inside the ranges anyway: the Drake rollout with the
  limits kept is reported too and agrees with the one without them bit for bit.
  Torque limits: steer's smooth saturation is switched off (model.torque_limits.enabled false);
  the URDF has no transmissions, so Drake makes no actuators for it, and the Panda's MJCF
  motors have no ctrl or force range (effort limit +inf). The torques enter Drake through the
  applied_generalized_force port (a generalized force per dof, the same as steer's torque.<j>).
  Gravity: 9.81 m/s^2 along -z in both (Drake's default; MuJoCo's default for the URDF and the
  Panda's option gravity="0 0 -9.81", which Drake's MJCF parser applies).

Usage (the build's python folder holds steer's module; --work is a scratch folder where a venv
with drake and numpy is made once, from the interpreter that runs this script):
  python3 tests/crosscheck/drake_crosscheck.py --steer-python build/python \\
      --work build/crosscheck --markdown build/crosscheck/drake.md --json build/crosscheck/drake.json
Exit code: 0 every check passed, 1 a check failed, 77 skipped (no venv/PyPI, no steer module,
or a steer built without MuJoCo's importer).
"""

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_venv  # noqa: E402

TAG = "drake_crosscheck.py"
ROOT = Path(__file__).resolve().parents[2]

H = 0.002  # [s] the step of both simulators
T = 250    # steps: 500 ms

# Tolerances, stated before measuring. The laws are the same equation, so the differences are
# round-off: ~1e-16 per step, amplified by the dynamics' sensitivity over 250 steps (a few
# orders at most over 0.5 s of an arm swinging under gravity).
TOL_LAW = 1e-12        # one Drake step against the stated equation, relative to max(1, |x|)
TOL_STATE = 1e-11      # [rad, m, rad/s, m/s] max |x_steer - x_Drake| over all steps
TOL_GRAD = 1e-9        # max |g_steer - g_Drake| / max |g_Drake|, for dL/dx0 and dL/du
TOL_LOSS = 1e-11       # |L_steer - L_Drake| / max(|L_Drake|, 1e-12)

# The models: the start (q0, v0) moves every joint; amp bounds the random torques [N m or N];
# target is q* of the terminal loss [rad or m]. Joint names are the files' (steer keeps them).
MODELS = [
    {
        "key": "three_link.urdf", "file": "mjcf/three_link.urdf", "format": "urdf",
        "weld": "base",  # Drake leaves a URDF's root link free; MuJoCo fixes it to the world
        "q0": [0.3, 0.4, -0.5, 0.0], "v0": [-0.2, 0.1, 0.3, 0.0],
        "amp": [1.0, 1.0, 0.5, 0.2], "target": [0.4, 0.6, -0.2, 0.05], "required": True,
    },
    {
        "key": "panda.xml", "file": "mjcf/panda.xml", "format": "mjcf",
        "weld": None,  # link0 has no joint: both parsers weld it to the world
        "q0": [0.1, -0.2, 0.05, -1.6, 0.1, 1.6, -0.7], "v0": [0.1, 0.0, -0.1, 0.2, 0.0, 0.1, 0.3],
        "amp": [2.0] * 7, "target": [0.2, -0.1, 0.1, -1.5, 0.2, 1.7, -0.5], "required": False,
    },
]
SCENARIOS = ["zero_torque", "random_torque"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steer-python", type=Path, default=ROOT / "build" / "python",
                   help="the build's python folder (holds steer/_steer*.so)")
    p.add_argument("--work", type=Path, default=ROOT / "build" / "crosscheck",
                   help="scratch folder; the venv goes to WORK/drake-venv")
    p.add_argument("--markdown", type=Path, help="write the results as Markdown here")
    p.add_argument("--json", type=Path, help="write the results as JSON here")
    p.add_argument("--repeats", type=int, default=5, help="timing repeats (medians reported)")
    p.add_argument("--ad-repeats", type=int, default=3,
                   help="repeats of Drake's full AutoDiffXd gradient (the slow one)")
    p.add_argument("--seed", type=int, default=20261207, help="seed of the random torques")
    return p.parse_args()


class DrakeWarnings(logging.Handler):
    """Keeps the parsers' warnings (attributes Drake ignores) for the report."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def median_time(fn, repeats):
    """Median wall time [s] of fn() over `repeats` calls, and the last call's result."""
    times, out = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main():
    args = parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    peer_venv.enter(TAG, args.work / "drake-venv", ["drake==1.51.1", "numpy"], ["pydrake", "numpy"])

    import numpy as np
    from importlib.metadata import version as dist_version
    from pydrake.autodiffutils import AutoDiffXd, ExtractGradient, ExtractValue, InitializeAutoDiff
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import DiscreteContactApproximation, MultibodyPlant
    from pydrake.systems.analysis import Simulator, Simulator_
    from pydrake.systems.framework import DiagramBuilder
    from pydrake.systems.primitives import TrajectorySource
    from pydrake.trajectories import PiecewisePolynomial

    steer = peer_venv.import_steer(TAG, args.steer_python)

    warnings = DrakeWarnings()
    logging.getLogger("drake").addHandler(warnings)
    logging.getLogger("drake").propagate = False  # the report lists them; keep the log quiet

    try:
        drake_version = dist_version("drake")
    except Exception:  # a source build of pydrake has no distribution metadata
        drake_version = "unknown"

    # ---------------------------------------------------------------- Drake's side
    def drake_plant(spec, limits=False, approximation="lagged"):
        """A discrete MultibodyPlant (h = 2 ms) of the model's file. limits=False removes every
        joint's position limits, so that SAP never adds a limit constraint."""
        plant = MultibodyPlant(time_step=H)
        # SAP (kLagged) explicitly: Drake up to 1.36 defaulted to TAMSI, another damping law
        plant.set_discrete_contact_approximation(
            DiscreteContactApproximation.kTamsi if approximation == "tamsi" else DiscreteContactApproximation.kLagged)
        Parser(plant).AddModels(str(ROOT / "configs" / spec["file"]))
        if spec["weld"]:
            plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(spec["weld"]))
        if not limits:
            for j in plant.GetJointIndices():
                joint = plant.get_joint(j)
                if joint.num_velocities() == 1:
                    joint.set_position_limits([-np.inf], [np.inf])
        # no sampled outputs: the state is then the plant's only (numeric) state, and
        # EvalUniquePeriodicDiscreteUpdate gives x_{k+1} = f(x_k, u_k) directly
        plant.SetUseSampledOutputPorts(False)
        plant.Finalize()
        return plant

    def one_dof_joints(plant):
        return [plant.get_joint(j) for j in plant.GetJointIndices() if plant.get_joint(j).num_velocities() == 1]

    def step_fn(plant):
        """x_{k+1} = f(x_k, u_k) of a plant (double or AutoDiffXd) on one context; x and u in
        Drake's order. The actuation port (the Panda's motors) stays zero: torques go through
        the applied-generalized-force port, one per dof, as steer's torque.<joint>."""
        ctx = plant.CreateDefaultContext()
        force_port = plant.get_applied_generalized_force_input_port()
        if plant.num_actuators() > 0:
            plant.get_actuation_input_port().FixValue(ctx, np.zeros(plant.num_actuators()))

        def step(x, u):
            force_port.FixValue(ctx, u)
            plant.SetPositionsAndVelocities(ctx, x)
            return plant.EvalUniquePeriodicDiscreteUpdate(ctx).value().copy()
        return step, ctx

    def drake_rollout(plant, x0, u):
        step, _ = step_fn(plant)
        xs = [np.array(x0, dtype=float)]
        for k in range(T):
            xs.append(step(xs[-1], u[k]))
        return np.array(xs)

    def drake_ad_rollout(plant_ad, x0, u, seed_u):
        """Forward-mode AutoDiffXd rollout: partials w.r.t. x0 (nx) and, with seed_u, every u_k
        (T nu more, u_k's at offset nx + k nu). Returns x_T's value and dx_T/d(x0, u)."""
        step, _ = step_fn(plant_ad)
        nx, nu = len(x0), u.shape[1]
        nd = nx + (T * nu if seed_u else 0)
        x = InitializeAutoDiff(np.asarray(x0, dtype=float), nd, 0).ravel()
        for k in range(T):
            if seed_u:
                uk = InitializeAutoDiff(u[k], nd, nx + k * nu).ravel()
            else:
                uk = np.array([AutoDiffXd(float(v)) for v in u[k]])
            x = step(x, uk)
        return ExtractValue(x).ravel(), ExtractGradient(x)

    def drake_law_residual(plant, xs, u, implicit_damping):
        """max_k |f_Drake(x_k, u_k) - f_law(x_k, u_k)| / max(1, |x|) along the trajectory xs,
        f_law the stated equation from Drake's own M (with reflected inertia), C v, tau_g, D."""
        step, _ = step_fn(plant)
        ctx = plant.CreateDefaultContext()
        nq, nv = plant.num_positions(), plant.num_velocities()
        D = np.zeros(nv)
        for joint in one_dof_joints(plant):
            D[joint.velocity_start()] = joint.GetDampingVector(ctx)[0]
        worst = 0.0
        for k in range(T):
            plant.SetPositionsAndVelocities(ctx, xs[k])
            q, v = xs[k][:nq], xs[k][nq:]
            M = plant.CalcMassMatrix(ctx)
            rhs = u[k] + plant.CalcGravityGeneralizedForces(ctx) - plant.CalcBiasTerm(ctx)
            if implicit_damping:   # (M + h D) v+ = M v + h (tau + tau_g - C v)
                v_next = np.linalg.solve(M + H * np.diag(D), M @ v + H * rhs)
            else:                  # M v+ = M v + h (tau + tau_g - C v - D v)
                v_next = np.linalg.solve(M, M @ v + H * (rhs - D * v))
            qdot = plant.MapVelocityToQDot(ctx, v_next)  # N(q) v+; N = I here
            x_law = np.concatenate([q + H * qdot, v_next])
            x_drake = step(xs[k], u[k])
            worst = max(worst, float(np.max(np.abs(x_drake - x_law)) / max(1.0, np.max(np.abs(x_law)))))
        return worst

    def drake_diagram(spec, u):
        """The plant driven by a zero-order hold of u inside a Diagram, so that a Simulator
        steps it in C++ (the fair timing of Drake's forward pass). Segment k of the hold spans
        [(k - 1/2) h, (k + 1/2) h), so the update at t = k h reads u_k whatever the rounding
        of k h."""
        builder = DiagramBuilder()
        plant = builder.AddSystem(drake_plant(spec))
        breaks = np.concatenate([[0.0], (np.arange(1, T + 1) - 0.5) * H])
        hold = PiecewisePolynomial.ZeroOrderHold(breaks, np.vstack([u, u[-1:]]).T)
        source = builder.AddSystem(TrajectorySource(hold))
        builder.Connect(source.get_output_port(), plant.get_applied_generalized_force_input_port())
        return builder.Build(), plant

    def drake_simulate(diagram, plant, x0, scalar):
        """Simulates T steps (T discrete updates at t = 0, h, ..., (T-1) h: AdvanceTo stops
        before the update at T h). scalar AutoDiffXd seeds x0 with unit partials."""
        sim = Simulator(diagram) if scalar is float else Simulator_[AutoDiffXd](diagram)
        ctx = sim.get_mutable_context()
        x = x0 if scalar is float else InitializeAutoDiff(x0).ravel()
        plant.SetPositionsAndVelocities(plant.GetMyMutableContextFromRoot(ctx), x)
        sim.Initialize()
        sim.AdvanceTo(T * H)
        return plant.GetPositionsAndVelocities(plant.GetMyContextFromRoot(ctx))

    # ---------------------------------------------------------------- steer's side
    def steer_sim(spec, joints):
        targets = [{"state": f"{j}.q", "target": t} for j, t in zip(joints, spec["target"])]
        config = {
            "name": "crosscheck_drake",
            "model": {
                "type": "articulated", spec["format"]: spec["file"], "integrator": "euler",
                # the comparison is of the free dynamics: no limit penalty, no saturation
                "joint_limits": {"enabled": False},
                "torque_limits": {"enabled": False},
            },
            "simulation": {"dt": H, "steps": T, "precision": "float64"},
            "loss": {"terminal": targets},  # L = sum_j 1/2 (q_T,j - q*_j)^2, weight 1
            "validation": {"enabled": False},
        }
        sim = steer.load(config, base_dir=str(ROOT / "configs"))
        sim.threads = 1
        return sim

    # ---------------------------------------------------------------- one model
    def run_model(spec, rng):
        out = {"file": "configs/" + spec["file"], "checks": {}}
        n_warn = len(warnings.lines)
        try:
            plant = drake_plant(spec)
        except Exception as e:  # Drake's parser refused the file
            out["skipped"] = f"Drake's {spec['format'].upper()} parser refused it: {e}"
            return out
        out["drake_parser_warnings"] = sorted(set(warnings.lines[n_warn:]))
        joints = one_dof_joints(plant)
        names = [j.name() for j in joints]
        nq, nv = plant.num_positions(), plant.num_velocities()
        if nq != nv or len(joints) != nv:
            out["skipped"] = f"Drake's plant has nq={nq}, nv={nv}: not a tree of hinges and slides"
            return out
        # the MJCF parser turns a joint's armature into its actuator's rotor inertia a / g^2, so
        # that the reflected inertia g^2 (a / g^2) on M's diagonal is MuJoCo's armature a
        actuators = [plant.get_joint_actuator(i) for i in plant.GetJointActuatorIndices()]
        out["reflected_inertia"] = {a.joint().name(): a.default_reflected_inertia() for a in actuators}
        try:
            sim = steer_sim(spec, names)
        except Exception as e:
            msg = str(e)
            if "without MuJoCo" in msg:
                peer_venv.skip(TAG, f"steer cannot import robot files: {msg.splitlines()[0]}")
            out["skipped"] = f"steer refused the config: {msg.splitlines()[0]}"
            return out

        # index maps: d_of_s[i] is the Drake slot of steer's state slot i; c_of_s likewise for
        # the controls (torque.<joint> -> the joint's dof)
        by_name = {j.name(): j for j in joints}
        d_of_s = []
        try:
            for s in sim.state_names:
                jn, _, kind = s.rpartition(".")
                d_of_s.append(by_name[jn].position_start() if kind == "q" else nq + by_name[jn].velocity_start())
            c_of_s = [by_name[c.split(".", 1)[1]].velocity_start() for c in sim.control_names]
        except KeyError as e:
            out["error"] = f"steer's joint {e} is not one of Drake's {sorted(by_name)}"
            return out
        d_of_s, c_of_s = np.array(d_of_s), np.array(c_of_s)
        if sorted(d_of_s) != list(range(nq + nv)) or sorted(c_of_s) != list(range(nv)):
            out["error"] = f"state or control names do not map onto Drake's dofs: {sim.state_names}"
            return out

        # inputs in Drake's order (the spec lists its values in the file's joint order, which
        # is Drake's joint order), then in steer's
        x0_d, amp, target_d = np.zeros(nq + nv), np.zeros(nv), np.zeros(nq)
        for i, j in enumerate(joints):
            x0_d[j.position_start()] = spec["q0"][i]
            x0_d[nq + j.velocity_start()] = spec["v0"][i]
            amp[j.velocity_start()] = spec["amp"][i]
            target_d[j.position_start()] = spec["target"][i]
        u_d = {"zero_torque": np.zeros((T, nv)),
               "random_torque": rng.uniform(-1.0, 1.0, (T, nv)) * amp}
        x0_s = x0_d[d_of_s]
        B = len(SCENARIOS)
        X0 = np.ascontiguousarray(np.tile(x0_s, (B, 1)))
        U = np.ascontiguousarray(np.stack([u_d[s][:, c_of_s] for s in SCENARIOS]))
        TH = np.ascontiguousarray(np.tile(sim.default_batch().theta[0], (B, 1)))
        r = sim.rollout(X0, U, TH, grad=True, trajectory_stride=1)
        if any(r.nonfinite):
            out["error"] = "steer's rollout became non-finite"
            return out

        plant_ad = plant.ToAutoDiffXd()
        plant_limits = drake_plant(spec, limits=True)
        try:
            plant_tamsi = drake_plant(spec, approximation="tamsi")
        except Exception as e:  # TAMSI is deprecated for removal: a later Drake lacks it
            plant_tamsi, out["tamsi"] = None, f"not available in this Drake: {e}"
        lo = np.array([j.position_lower_limits()[0] for j in one_dof_joints(plant_limits)])
        hi = np.array([j.position_upper_limits()[0] for j in one_dof_joints(plant_limits)])
        qidx = np.array([j.position_start() for j in one_dof_joints(plant_limits)])

        for b, scen in enumerate(SCENARIOS):
            res = {}
            xs_d = drake_rollout(plant, x0_d, u_d[scen])
            xs_s = r.trajectory[b][:, np.argsort(d_of_s)]  # steer's states in Drake's order
            dq = np.max(np.abs(xs_s[:, :nq] - xs_d[:, :nq]), axis=1)
            dv = np.max(np.abs(xs_s[:, nq:] - xs_d[:, nq:]), axis=1)
            res["max_dq_per_step"] = dq.tolist()
            res["max_dv_per_step"] = dv.tolist()
            res["max_dq"], res["max_dv"] = float(dq.max()), float(dv.max())
            res["max_excursion"] = float(np.max(np.abs(xs_d[:, :nq] - xs_d[0, :nq])))
            # how far the motion stays from the file's ranges (inf for the continuous waist)
            q_j = xs_d[:, qidx]
            res["min_margin_to_limits"] = float(np.min(np.minimum(q_j - lo, hi - q_j)))
            xs_kept = drake_rollout(plant_limits, x0_d, u_d[scen])
            res["limits_kept_vs_removed"] = float(np.max(np.abs(xs_kept - xs_d)))
            res["law_residual_sap"] = drake_law_residual(plant, xs_d, u_d[scen], implicit_damping=True)
            if plant_tamsi is not None:
                xs_t = drake_rollout(plant_tamsi, x0_d, u_d[scen])
                res["tamsi_law_residual_explicit_damping"] = drake_law_residual(
                    plant_tamsi, xs_t, u_d[scen], implicit_damping=False)
                res["tamsi_vs_steer_max_dx"] = float(np.max(np.abs(xs_t - xs_s)))

            # the gradient of L = 1/2 |q_T - q*|^2: dL/dz = (q_T - q*)^T dq_T/dz
            t_ad, (xT, J) = median_time(lambda: drake_ad_rollout(plant_ad, x0_d, u_d[scen], True),
                                        args.ad_repeats if scen == "random_torque" else 1)
            e = xT[:nq] - target_d
            g = e @ J[:nq]
            L_d = 0.5 * float(e @ e)
            g_x0_d = g[:nq + nv][d_of_s]
            g_u_d = g[nq + nv:].reshape(T, nv)[:, c_of_s]
            res["ad_value_vs_double"] = float(np.max(np.abs(xT - xs_d[-1])))
            res["loss_drake"], res["loss_steer"] = L_d, float(r.loss[b])
            res["loss_rel_err"] = abs(float(r.loss[b]) - L_d) / max(abs(L_d), 1e-12)
            res["grad_x0_rel_err"] = float(np.max(np.abs(r.grad_x0[b] - g_x0_d)) / np.max(np.abs(g_x0_d)))
            res["grad_u_rel_err"] = float(np.max(np.abs(r.grad_u[b] - g_u_d)) / np.max(np.abs(g_u_d)))
            res["grad_x0_max_abs"] = float(np.max(np.abs(g_x0_d)))
            res["grad_u_max_abs"] = float(np.max(np.abs(g_u_d)))
            if scen == "random_torque":
                res["drake_ad_full_seconds"] = t_ad
            out["checks"][scen] = res

        # timings on the random-torque rollout, one rollout, one thread
        x1, u1, th1 = X0[1:2].copy(), U[1:2].copy(), TH[1:2].copy()
        tm = {}

        def steer_timed(grad):
            wall, eng = [], []
            for _ in range(max(1, args.repeats)):
                t0 = time.perf_counter()
                rr = sim.rollout(x1, u1, th1, grad=grad)
                wall.append(time.perf_counter() - t0)
                eng.append(rr.engine_seconds)
            return statistics.median(wall), statistics.median(eng)
        sim.rollout(x1, u1, th1, grad=True)  # warm-up (first-call allocations)
        tm["steer_forward_wall"], tm["steer_forward_engine"] = steer_timed(False)
        tm["steer_grad_wall"], tm["steer_grad_engine"] = steer_timed(True)
        diagram, dplant = drake_diagram(spec, u_d["random_torque"])
        tm["drake_forward_simulator"], x_sim = median_time(
            lambda: drake_simulate(diagram, dplant, x0_d, float), args.repeats)
        tm["drake_forward_python_loop"], _ = median_time(
            lambda: drake_rollout(plant, x0_d, u_d["random_torque"]), args.repeats)
        diagram_ad = diagram.ToAutoDiffXd()
        dplant_ad = diagram_ad.GetSubsystemByName(dplant.get_name())
        tm["drake_ad_x0_simulator"], x_ad = median_time(
            lambda: drake_simulate(diagram_ad, dplant_ad, x0_d, AutoDiffXd), args.repeats)
        tm["drake_ad_x0_partials"] = nq + nv
        tm["drake_ad_full_python_loop"] = out["checks"]["random_torque"]["drake_ad_full_seconds"]
        tm["drake_ad_full_partials"] = nq + nv + T * nv
        xs_ref = drake_rollout(plant, x0_d, u_d["random_torque"])[-1]
        tm["simulator_vs_loop_max_dx"] = float(max(np.max(np.abs(x_sim - xs_ref)),
                                                   np.max(np.abs(ExtractValue(x_ad).ravel() - xs_ref))))
        out["timing"] = tm

        # verdicts
        fails = []
        for scen, res in out["checks"].items():
            for key, tol in (("max_dq", TOL_STATE), ("max_dv", TOL_STATE), ("grad_x0_rel_err", TOL_GRAD),
                             ("grad_u_rel_err", TOL_GRAD), ("loss_rel_err", TOL_LOSS),
                             ("law_residual_sap", TOL_LAW)):
                if not res[key] <= tol:
                    fails.append(f"{scen}: {key} = {res[key]:.3g} > {tol:g}")
            if res["limits_kept_vs_removed"] != 0.0:
                fails.append(f"{scen}: Drake with the file's limits differs from Drake without them "
                             f"by {res['limits_kept_vs_removed']:.3g} (a limit constraint acted)")
        if tm["simulator_vs_loop_max_dx"] > 1e-13:
            fails.append("the timed Simulator run differs from the stepped one by "
                         f"{tm['simulator_vs_loop_max_dx']:.3g}")
        out["failures"] = fails
        out["passed"] = not fails
        return out

    rng = np.random.default_rng(args.seed)
    results = {
        "check": "steer articulated (euler) vs Drake MultibodyPlant (discrete, SAP)",
        "drake_version": drake_version,
        "steer_version": getattr(steer, "__version__", "unknown"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} logical CPUs; steer on one thread (sim.threads = 1), "
                   "Drake single-threaded",
        "h": H, "T": T, "seed": args.seed,
        "tolerances": {"law": TOL_LAW, "state": TOL_STATE, "grad_rel": TOL_GRAD, "loss_rel": TOL_LOSS},
        "models": {},
    }
    for spec in MODELS:
        res = run_model(spec, rng)
        results["models"][spec["key"]] = res
        if spec["required"] and "skipped" in res:
            res.setdefault("failures", []).append("skipped: " + res["skipped"])
            res["passed"] = False
        if "error" in res:
            res.setdefault("failures", []).append(res["error"])
            res["passed"] = False
    results["passed"] = all(m.get("passed", True) for m in results["models"].values())

    md = markdown(results)
    print(md)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(md)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    print(f"{TAG}: {'PASS' if results['passed'] else 'FAIL'}")
    return 0 if results["passed"] else 1


def markdown(res):
    tol = res["tolerances"]
    lines = [f"# steer vs Drake {res['drake_version']} (issue 42)", "",
             f"h = {res['h']} s, T = {res['T']} steps; {res['machine']}; Python {res['python']}.",
             f"Tolerances: state {tol['state']:g}, gradient {tol['grad_rel']:g} (relative to the largest entry), "
             f"loss {tol['loss_rel']:g}, Drake's one-step law {tol['law']:g}.", ""]
    for key, m in res["models"].items():
        lines.append(f"## {key} ({m['file']})")
        if "skipped" in m:
            lines += [f"Skipped: {m['skipped']}", ""]
            continue
        if "error" in m:
            lines += [f"Error: {m['error']}", ""]
            continue
        if m.get("reflected_inertia"):
            ri = sorted(set(m["reflected_inertia"].values()))
            lines.append(f"Drake's reflected inertia (from the MJCF armature): {ri} kg m^2 per joint.")
        if m.get("drake_parser_warnings"):
            lines.append(f"Drake's parser ignored: {len(m['drake_parser_warnings'])} warning(s), e.g. "
                         f"`{m['drake_parser_warnings'][0].split(': ', 2)[-1]}`")
        lines += ["", "| torques | max \\|Δq\\| | max \\|Δv\\| | Δ at step T (q, v) | excursion [rad/m] | margin to limits | "
                  "limits kept vs removed | Drake law residual | loss rel | dL/dx0 rel | dL/du rel |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for scen, c in m["checks"].items():
            lines.append(f"| {scen} | {c['max_dq']:.2e} | {c['max_dv']:.2e} | {c['max_dq_per_step'][-1]:.1e}, "
                         f"{c['max_dv_per_step'][-1]:.1e} | {c['max_excursion']:.2f} | {c['min_margin_to_limits']:.2f} | "
                         f"{c['limits_kept_vs_removed']:.1e} | {c['law_residual_sap']:.1e} | {c['loss_rel_err']:.1e} | "
                         f"{c['grad_x0_rel_err']:.1e} | {c['grad_u_rel_err']:.1e} |")
        tams = [(s, c) for s, c in m["checks"].items() if "tamsi_vs_steer_max_dx" in c]
        if tams:
            lines.append("")
            lines.append("TAMSI (explicit damping, information only): " + "; ".join(
                f"{s}: max |x_TAMSI - x_steer| = {c['tamsi_vs_steer_max_dx']:.2e}, its law residual "
                f"{c['tamsi_law_residual_explicit_damping']:.1e}" for s, c in tams))
        t = m["timing"]
        lines += ["", "| timing (median, one rollout of 250 steps) | seconds |", "|---|---|",
                  f"| steer forward, wall / engine | {t['steer_forward_wall']:.2e} / {t['steer_forward_engine']:.2e} |",
                  f"| steer forward + adjoint gradient (x0, u, θ), wall / engine | {t['steer_grad_wall']:.2e} / {t['steer_grad_engine']:.2e} |",
                  f"| Drake forward, Simulator (C++ loop) | {t['drake_forward_simulator']:.2e} |",
                  f"| Drake forward, Python loop of discrete updates | {t['drake_forward_python_loop']:.2e} |",
                  f"| Drake AutoDiffXd, x0 only ({t['drake_ad_x0_partials']} partials), Simulator | {t['drake_ad_x0_simulator']:.2e} |",
                  f"| Drake AutoDiffXd, x0 and u ({t['drake_ad_full_partials']} partials), Python loop | {t['drake_ad_full_python_loop']:.2e} |",
                  ""]
        lines.append("Result: " + ("pass" if m.get("passed") else "FAIL: " + "; ".join(m.get("failures", []))))
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
