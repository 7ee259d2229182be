"""NVIDIA Newton (PyPI `newton` 1.8.0 on warp-lang 1.19.0, CPU device) beside steer on standard
robot files (issue 42, part 3, the standard-robot half; the quadruped half is
newton_quadruped.py, whose helpers this script imports).

The robots, each imported unchanged by both engines (Newton's ModelBuilder.add_mjcf, steer's
MuJoCo compiler), from the pinned wheels of tools/standard_robots.py (its cache folder):

  acrobot  dm_control 1.0.52 suite/acrobot.xml: two hinges (2 dof), no contact in the file
           (<flag constraint="disable"/>), joint damping 0.05 N m s/rad, a motor of gear 2 on
           the elbow, RK4 at h = 10 ms. Both engines implement everything in it but the RK4.
  ant      Gymnasium 1.4.0 ant.xml: a free root and 8 hinges (14 dof, 4 fixed leg bodies),
           armature 1 kg m^2, damping 1 N m s/rad, joint limits, motors of gear 150, RK4 at
           h = 10 ms; here 2 m up with contact off on both sides (the air scene of
           newton_quadruped.py), so only the tree, damping and limits act.

Candidates looked at and left: Gymnasium's inverted_double_pendulum.xml (Newton drops its
gravity's 1e-5 m/s^2 x component), reacher.xml (its target's two slides become one Newton D6
joint whose limits Newton shifts by `ref`; the target is not coupled to the arm: adds nothing).

What the engines share and where they differ here (h = dt, from Newton's sources:
newton/_src/solvers/featherstone, utils/import_mjcf.py):

  shared   bodies, masses, centres of mass, inertias (compared below), armature, gravity,
           joint torques (Newton's control.joint_f = steer's `torque.<joint>` controls, the
           motor's gear applied by the caller: tau = g ctrl), and the semi-implicit Euler step
           on the joints: (M + diag(armature)) qdd = tau - c, qd+ = qd + h qdd, q+ = q + h qd+.
  differ   1. the integrator: both files ask for RK4; Featherstone has only semi-implicit Euler.
              The `matched` and `euler` rows run steer's `euler`; the `file` rows steer's RK4,
              so Newton's Euler's own O(h) global error is the difference there.
           2. joint damping D: steer's (MuJoCo's) Euler is implicit in it,
              (M + h D) qd+ = M qd + h (tau - c); Featherstone adds -D qd to tau (explicit):
              O(h^2) per step, O(h) over a fixed time (the `euler` rows).
           3. joint limits (ant): Newton's import gives a linear penalty ke = 1e4 N m/rad,
              kd = 10 N m s/rad; steer's is the softplus penalty. The air starts keep every
              hinge inside its range so the limits act in neither (reported: the range met).
           4. motor force limits (ctrlrange +-1 times the gear): Featherstone ignores
              joint_effort_limit; steer's smooth saturation at 2 N m (acrobot elbow) and 150 N m
              (ant) is switched off in `matched` and unreached elsewhere (|tau| < 1 N m).
           5. the free root's quaternion update (ant): (h|w|)^3/12 per step apart (see
              newton_quadruped.py item 2).
           6. precision: Newton's kernels are float32; steer runs float64 here.

Subcommands:

  check   (A) 500 ms at the file's h = 10 ms (50 steps) from a seeded start under a seeded
          per-step torque sequence, in three settings: `matched` (damping 0, limits and force
          limits off in both, steer's `euler`): the difference must be float32 rounding;
          `euler` (the file's damping and limits, steer's `euler`: item 2) and `file` (steer's
          RK4 as the file says: item 1), each at h = 10, 5, 2.5 ms: the difference halves with h.
          (B) the gradient of a terminal loss L = 1/2 sum_k w_k (s_k - s*_k)^2 on q and some
          rates at T, with respect to the initial velocities and every step's hinge torques,
          matched laws, T = 10 and 20 steps: Newton's wp.Tape with one SolverFeatherstone per
          step (and, reported, with one shared solver: Featherstone's stale M/H/L, see
          newton_quadruped.NewtonAir), steer's adjoint and steer's centered FD (float64).
  time    the file's laws (steer's `euler`), contact off, T = 50 steps of 10 ms, per-step
          controls with gradients, loss 1/2 (q0_T - 0.3)^2 per world: B worlds in one Newton
          model (replicate) for each --batch, forward and forward+backward per rollout-step,
          first call (JIT or cache load) apart; one solver, and one solver per step for B <=
          --per-step-max-batch; steer's module on the same B, T, dt, one thread, float32 and
          float64, in the same run. Newton's best B is the one with the least forward+backward
          time per rollout-step. Warp's CPU kernels run on one thread.

Outputs JSON on stdout (and --json FILE).
"""
import argparse
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import newton_quadruped as nq  # noqa: E402  (import_newton, quat_rotate_wxyz, rotation_angle, vec_rel, timed, ...)

NEWTON_REQUIREMENTS = nq.NEWTON_REQUIREMENTS
DEFAULT_CACHE = os.path.join(ROOT, "build", "standard_robots")
SECONDS = 0.5
# m: the ant's torso at the start. It falls 1.2 m in 0.5 s (from v_z = 0.5 m/s) and its legs
# reach 0.6 m below it: 3 m keeps every foot over 1 m above the floor (2 m, the quadruped's,
# let a tilted foot reach the floor). Featherstone's float32 spatial algebra about the world
# origin loses a little more with height (see newton_quadruped.AIR_HEIGHT)
AIR_HEIGHT = 3.0

# name: (tools/standard_robots.py's suite key, the file)
ROBOTS = {
    "acrobot": ("dm_control", "acrobot.xml"),
    "ant": ("gymnasium", "ant.xml"),
}


def robot_file(name, cache, offline=False):
    """The robot's XML path in tools/standard_robots.py's cache (downloaded and checked against
    the pinned wheel's SHA-256 when missing). Raises standard_robots.Skip where PyPI cannot be
    reached and the cache has no copy, standard_robots.Failure on a bad wheel."""
    import standard_robots as sr

    key, fname = ROBOTS[name]
    suite = next(s for s in sr.SUITES if s.key == key)
    cache = Path(cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    return str(sr.fetch(suite, cache, offline)[fname])


# ------------------------------------------------------------------ layouts


class Layout:
    """steer's x = [q (nq), v (nv)] and its per-dof controls for one robot, and Newton's
    joint_q (nq) / joint_qd (nv) of one world. A free root (steer's names root.p.*, root.quat.*)
    is steer's [p, quat (w,x,y,z)] + [v (world, the root's origin), w (body)] and Newton's
    [p, quat (x,y,z,w)] + [v (world, of the centre of mass), w (world)]: the same v where the
    root body's centre of mass is its origin (checked against Newton's body_com)."""

    def __init__(self, sim):
        names = list(sim.state_names)
        self.free = names[0] == "root.p.x"
        self.hinges = [n[:-2] for n in names if n.endswith(".q")]
        nh = len(self.hinges)
        self.nq, self.nv, self.nh = nh + (7 if self.free else 0), nh + (6 if self.free else 0), nh
        if sim.nx != self.nq + self.nv:
            raise SystemExit(f"unexpected steer state layout: {names}")
        self.q0 = self.nq - nh  # first hinge angle in q, in both engines
        self.v0 = self.nv - nh  # first hinge rate in v
        cols = []
        for h in self.hinges:
            hit = [i for i, n in enumerate(sim.control_names) if n == f"torque.{h}"]
            if len(hit) != 1:
                raise SystemExit(f"no control torque.{h} in {sim.control_names}")
            cols.append(hit[0])
        self.cols = cols  # steer's u columns of the hinge torques, in the hinges' order

    def check_newton(self, model):
        """Newton's world 0 has the same coordinates, the hinges in the same order, and a free
        root whose centre of mass is at its origin."""
        import numpy as np

        W = model.world_count
        if model.joint_coord_count // W != self.nq or model.joint_dof_count // W != self.nv:
            raise SystemExit(f"Newton has {model.joint_coord_count // W} coordinates and {model.joint_dof_count // W} "
                             f"dofs per world, steer {self.nq} and {self.nv}")
        jt = model.joint_type.numpy()[:model.joint_count // W]
        labels = list(model.joint_label)[:len(jt)]
        # Newton's JointType: 1 revolute, 3 fixed, 4 free (newton/_src/sim/joints.py)
        movers = [lab.rsplit("/", 1)[-1] for lab, t in zip(labels, jt) if int(t) not in (3, 4)]
        if movers != self.hinges:
            raise SystemExit(f"Newton's joints {movers} are not steer's {self.hinges}")
        if self.free and float(np.max(np.abs(model.body_com.numpy()[0]))) > 1e-7:
            raise SystemExit("the free root's centre of mass is off its origin: the v mapping assumes it")

    def to_newton(self, x):
        import numpy as np

        x = np.asarray(x, dtype=np.float64)
        q, v = x[:self.nq], x[self.nq:]
        if not self.free:
            return q.copy(), v.copy()
        jq = np.concatenate([q[0:3], q[4:7], q[3:4], q[7:]])
        jqd = np.concatenate([v[0:3], nq.quat_rotate_wxyz(q[3:7], v[3:6]), v[6:]])
        return jq, jqd

    def from_newton(self, jq, jqd):
        import numpy as np

        if not self.free:
            return np.concatenate([jq, jqd])
        qw = np.concatenate([jq[6:7], jq[3:6]])
        w_body = nq.quat_rotate_wxyz(qw * np.array([1, -1, -1, -1]), jqd[3:6])
        return np.concatenate([jq[0:3], qw, jq[7:], jqd[0:3], w_body, jqd[6:]])

    def newton_index(self, i):
        """Newton's flat index in [joint_q, joint_qd] of steer's x[i] (not the free root's
        quaternion w or its angular velocity, whose frames differ)."""
        if i < self.nq:
            if self.free and 3 <= i <= 6:
                if i == 3:
                    raise ValueError("quat.w is not a loss term here")
                return i - 1  # (x, y, z) at Newton's 3..5
            return i
        if self.free and self.nq + 3 <= i < self.nq + 6:
            raise ValueError("root.w is not a loss term here")
        return i

    def grad_v_to_steer(self, g_qd, x0):
        """dL/dv_0 in steer's layout from Newton's dL/djoint_qd_0: dL/dw_body = R^T dL/dw_world."""
        import numpy as np

        g = np.asarray(g_qd, dtype=np.float64).copy()
        if self.free:
            g[3:6] = nq.quat_rotate_wxyz(np.asarray(x0[3:7]) * np.array([1, -1, -1, -1]), g[3:6])
        return g

    def diff(self, a, b):
        """largest differences over the steps between two steer-layout trajectories."""
        import numpy as np

        out = {}
        if self.free:
            out["root_p_m"] = float(np.max(np.abs(a[:, 0:3] - b[:, 0:3])))
            out["root_angle_rad"] = max(nq.rotation_angle(a[k, 3:7], b[k, 3:7]) for k in range(len(a)))
            out["root_v_m_s"] = float(np.max(np.abs(a[:, self.nq:self.nq + 3] - b[:, self.nq:self.nq + 3])))
            out["root_w_rad_s"] = float(np.max(np.abs(a[:, self.nq + 3:self.nq + 6] - b[:, self.nq + 3:self.nq + 6])))
        out["hinge_q_rad"] = float(np.max(np.abs(a[:, self.q0:self.nq] - b[:, self.q0:self.nq])))
        out["hinge_qd_rad_s"] = float(np.max(np.abs(a[:, self.nq + self.v0:] - b[:, self.nq + self.v0:])))
        return out


# --------------------------------------------------------------- the scenes


def start_and_controls(robot, lay, T, dt, seed=0):
    """x0 (steer layout) and the hinge torques U (T, nh) [N m] of the checks.

    acrobot: q = (0.4, -0.6) rad from upright, rates up to 1 rad/s, the elbow's motor torque
    g ctrl with g = 2 N m and ctrl = 0.4 sin(2 pi 1.3 t + phi), and a shoulder torque of up to
    0.4 N m (steer's extra input, Newton's joint_f).
    ant: the torso AIR_HEIGHT up (contact off in both anyway) with v = (0.3, -0.2, 0.5) m/s and
    w_body = (1.5, -1.0, 2.0) rad/s; each hinge at its range's middle (the ankles'
    ranges are 30-70 degrees away from 0, the file's pose, which is outside them) +-0.05 rad,
    rates up to 0.3 rad/s, torques 150 ctrl with |ctrl| <= 0.004 (|tau| <= 0.6 N m: the hinges stay in range).
    The torques are a function of time t = k h (a sum of two sines) so every h sees the same
    sequence."""
    import numpy as np

    rng = np.random.default_rng(seed)
    nh = lay.nh
    amp = rng.uniform(0.3, 1.0, (2, nh))
    freq = rng.uniform(0.8, 3.0, (2, nh))
    phase = rng.uniform(0.0, 2 * math.pi, (2, nh))
    t = (np.arange(T) * dt)[:, None]
    wave = (amp[0] * np.sin(2 * math.pi * freq[0] * t + phase[0]) + amp[1] * np.sin(2 * math.pi * freq[1] * t + phase[1])) / 2
    x0 = np.zeros(lay.nq + lay.nv)
    if robot == "acrobot":
        x0[:2] = [0.4, -0.6]
        x0[2:] = rng.uniform(-1.0, 1.0, 2)
        U = np.stack([0.4 * wave[:, 0], 2.0 * 0.4 * wave[:, 1]], axis=1)
    else:
        x0[2] = AIR_HEIGHT
        ang = 0.7
        x0[3:7] = [math.cos(ang / 2), math.sin(ang / 2) * 0.6, 0.0, math.sin(ang / 2) * 0.8]
        mid = np.array([0.0, 0.872665, 0.0, -0.872665, 0.0, -0.872665, 0.0, 0.872665])  # rad: ranges' middles
        x0[7:lay.nq] = mid + rng.uniform(-0.05, 0.05, nh)
        x0[lay.nq:lay.nq + 6] = [0.3, -0.2, 0.5, 1.5, -1.0, 2.0]
        x0[lay.nq + 6:] = rng.uniform(-0.3, 0.3, nh)
        U = 150.0 * 0.004 * wave
    return x0, U


def loss_terms(robot, lay):
    """(steer state index, target, weight) of the terminal loss (steer's limit of 16 terms)."""
    import numpy as np

    rng = np.random.default_rng(7)
    if robot == "acrobot":
        return [(0, 0.2, 1.0), (1, -0.3, 1.0), (2, 0.0, 0.1), (3, 0.5, 0.1)]
    terms = [(i, [0.4, -0.3, AIR_HEIGHT - 1.0][i], 1.0) for i in range(3)]
    terms += [(4 + i, 0.1 * (i - 1), 2.0) for i in range(3)]
    terms += [(lay.q0 + j, float(rng.uniform(-0.5, 0.5)), 0.5) for j in range(lay.nh)]
    terms += [(lay.nq + lay.v0 + j, 0.0, 0.05) for j in (1, 4)]
    return terms


# ------------------------------------------------------------------ Newton


def newton_model(wp, newton, path, B, law, requires_grad=True):
    """B copies of the file, one world each (newton_quadruped.newton_model): 'matched' takes out
    damping and limits (Featherstone has no force limit); 'euler' and 'file' keep the file's."""
    return nq.newton_model(wp, newton, B, law=law, requires_grad=requires_grad, path=path)


class NewtonRollout:
    """B worlds of one robot, T steps under per-step controls (one Control each, joint_f with
    gradients), a terminal loss on Newton's [joint_q, joint_qd] entries `nidx` summed over the
    worlds. per_step_solver: one SolverFeatherstone per step (its M, H, L kept for the tape:
    the exact adjoint) or one for all steps (Newton's usual use; the tape's gradient then uses
    the last step's matrices, see newton_quadruped.NewtonAir)."""

    def __init__(self, wp, newton, path, lay, B, T, dt, law, terms, per_step_solver=True):
        import numpy as np

        self.wp, self.lay, self.B, self.T, self.dt = wp, lay, B, T, dt
        m = newton_model(wp, newton, path, B, law)
        lay.check_newton(m)
        self.model = m
        self.solvers = [newton.solvers.SolverFeatherstone(m) for _ in range(T if per_step_solver else 1)]
        self.states = [m.state() for _ in range(T + 1)]
        self.controls = [m.control() for _ in range(T)]
        self.idx = wp.array(np.array([lay.newton_index(i) for i, _, _ in terms], dtype=np.int32), dtype=wp.int32)
        self.tgt = wp.array(np.array([t for _, t, _ in terms], dtype=np.float32), dtype=float)
        self.wts = wp.array(np.array([w for _, _, w in terms], dtype=np.float32), dtype=float)
        self.nterms = len(terms)
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

        @wp.kernel
        def terminal_loss(jq: wp.array(dtype=float), jqd: wp.array(dtype=float), idx: wp.array(dtype=wp.int32),
                          tgt: wp.array(dtype=float), wts: wp.array(dtype=float), nq: int, nv: int, nterms: int,
                          loss: wp.array(dtype=float)):
            # one thread per (world, term): L = sum_w sum_k 1/2 w_k (s_wk - s*_k)^2
            t = wp.tid()
            w = t // nterms
            k = t - w * nterms
            i = idx[k]
            s = float(0.0)
            if i < nq:
                s = jq[w * nq + i]
            else:
                s = jqd[w * nv + i - nq]
            e = s - tgt[k]
            wp.atomic_add(loss, 0, 0.5 * wts[k] * e * e)

        self.kernel = terminal_loss

    def set_inputs(self, x0, U):
        """every world from x0 (steer layout) under U (T, nh) hinge torques [N m]."""
        import numpy as np

        lay, B = self.lay, self.B
        jq, jqd = lay.to_newton(x0)
        self.states[0].joint_q.assign(np.tile(jq, B).astype(np.float32))
        self.states[0].joint_qd.assign(np.tile(jqd, B).astype(np.float32))
        f = np.zeros((len(U), lay.nv), dtype=np.float32)
        f[:, lay.v0:] = U
        for k, c in enumerate(self.controls):
            c.joint_f.assign(np.tile(f[k], B))

    def forward(self):
        self.loss.zero_()
        for k in range(self.T):
            self.states[k].clear_forces()
            self.solvers[k % len(self.solvers)].step(self.states[k], self.states[k + 1], self.controls[k], None, self.dt)
        self.wp.launch(self.kernel, dim=self.B * self.nterms,
                       inputs=[self.states[-1].joint_q, self.states[-1].joint_qd, self.idx, self.tgt, self.wts,
                               self.lay.nq, self.lay.nv, self.nterms, self.loss], device="cpu")

    def trajectory(self, x0, U):
        """world 0's steer-layout states x_0 .. x_T, float64 from Newton's float32."""
        import numpy as np

        self.set_inputs(x0, U)
        self.forward()
        nqv = (self.lay.nq, self.lay.nv)
        return np.array([self.lay.from_newton(s.joint_q.numpy()[:nqv[0]].astype(np.float64),
                                              s.joint_qd.numpy()[:nqv[1]].astype(np.float64)) for s in self.states])

    def grad(self, x0, U):
        """(B = 1) loss, dL/dv_0 (steer's layout) and dL/dU (T, nh)."""
        import numpy as np

        self.set_inputs(x0, U)
        tape = self.wp.Tape()
        with tape:
            self.forward()
        tape.backward(self.loss)
        g_qd = self.states[0].joint_qd.grad.numpy().astype(np.float64)
        g_u = np.array([c.joint_f.grad.numpy()[self.lay.v0:] for c in self.controls], dtype=np.float64)
        val = float(self.loss.numpy()[0])
        tape.zero()
        return val, self.lay.grad_v_to_steer(g_qd, x0), g_u

    def run_fwd(self):
        self.forward()
        self.wp.synchronize_device("cpu")

    def run_fwd_bwd(self):
        tape = self.wp.Tape()
        with tape:
            self.forward()
        tape.backward(self.loss)
        tape.zero()
        self.wp.synchronize_device("cpu")


# ------------------------------------------------------------------- steer


def steer_config(path, T, dt, law, names, terms, precision="float64"):
    """steer's config of the same file: contact off (the ant is in the air; the acrobot has
    none), `matched` also without damping, limits and force limits; `matched` and `euler` with
    steer's `euler` integrator, `file` with the file's RK4."""
    model = {"type": "articulated", "mjcf": path, "contact": {"enabled": False}}
    if law != "file":
        model["integrator"] = "euler"
    if law == "matched":
        model["all_joints"] = {"damping": 0.0}
        model["joint_limits"] = {"enabled": False}
        model["torque_limits"] = {"enabled": False}
    return {"name": f"newton_standard_{law}", "model": model,
            "simulation": {"steps": T, "precision": precision, "backend": "cpu", **({"dt": dt} if dt else {})},
            "loss": {"terminal": [{"state": names[i], "target": t, "weight": w} for i, t, w in terms]},
            "validation": {"enabled": False}}


def steer_sim(steer, path, T, dt, law, terms, precision="float64"):
    probe = steer.load({"name": "probe", "model": {"type": "articulated", "mjcf": path},
                        "simulation": {"steps": 1}, "loss": {"control_effort": 1}, "validation": {"enabled": False}})
    sim = steer.load(steer_config(path, T, dt, law, list(probe.state_names), terms, precision))
    sim.threads = 1
    return sim, Layout(sim)


def steer_inputs(sim, lay, x0, U, B=1):
    import numpy as np

    X = np.tile(np.asarray(x0, dtype=np.float64), (B, 1))
    Us = np.zeros((B, sim.T, sim.nu))
    Us[:, :, lay.cols] = U
    # model.contact.enabled = false leaves the imported ground points' forces in place (steer has
    # no key that removes them, see tools/standard_robots.py --crosscheck): these three theta
    # slots at 0 do, as Newton's step without a Contacts object has none
    th = np.array(sim.theta, dtype=np.float64)
    for i, n in enumerate(sim.param_names):
        if n in ("contact.stiffness", "contact.damping", "contact.friction"):
            th[i] = 0.0
    return X, Us, np.tile(th, (B, 1))


def steer_trajectory(sim, lay, x0, U):
    import numpy as np

    X, Us, TH = steer_inputs(sim, lay, x0, U)
    return np.array(sim.rollout(X, Us, TH, trajectory_stride=1).trajectory[0])


def steer_grad_fd(sim, lay, x0, U, eps=1e-6):
    """steer's loss, adjoint dL/dv_0 (nv) and dL/dU (T, nh), and centered FD of the same
    derivatives, in one batch of 2 (nv + T nh) rollouts."""
    import numpy as np

    X, Us, TH = steer_inputs(sim, lay, x0, U)
    r = sim.rollout(X, Us, TH, grad=True)
    g_v = np.array(r.grad_x0[0, lay.nq:])
    g_u = np.array(r.grad_u[0][:, lay.cols])
    T, n = sim.T, lay.nv + sim.T * lay.nh
    Xp, Up = np.tile(X, (2 * n, 1)), np.tile(Us, (2 * n, 1, 1))
    for k in range(n):
        for s, row in ((1.0, 2 * k), (-1.0, 2 * k + 1)):
            if k < lay.nv:
                Xp[row, lay.nq + k] += s * eps
            else:
                j = k - lay.nv
                Up[row, j // lay.nh, lay.cols[j % lay.nh]] += s * eps
    lp = sim.rollout(Xp, Up, np.tile(TH, (2 * n, 1))).loss
    fd = (lp[0::2] - lp[1::2]) / (2 * eps)
    return float(r.loss[0]), g_v, g_u, fd[:lay.nv], fd[lay.nv:].reshape(T, lay.nh)


def inertia_check(wp, newton, steer, path):
    """Newton's imported body masses, centres of mass and inertias against steer's theta slots
    `<body>.mass|com.*|inertia.*` (bodies matched by name; steer's joint-frame and free-frame
    bodies of zero mass have no Newton counterpart)."""
    import numpy as np

    model = newton_model(wp, newton, path, 1, "file", requires_grad=False)
    sim = steer.load({"name": "probe", "model": {"type": "articulated", "mjcf": path}, "simulation": {"steps": 1},
                      "loss": {"control_effort": 1}, "validation": {"enabled": False}})
    th = {n: float(t) for n, t in zip(sim.param_names, sim.theta)}
    mass, com, inertia = model.body_mass.numpy(), model.body_com.numpy(), model.body_inertia.numpy()
    worst = {"bodies": 0, "mass_rel": 0.0, "com_m": 0.0, "inertia_rel": 0.0}
    for b, label in enumerate(model.body_label):
        name = label.rsplit("/", 1)[-1]
        if f"{name}.mass" not in th:
            continue  # MuJoCo's unnamed bodies (Newton's body_3 ...): steer names them otherwise
        worst["bodies"] += 1
        m_s = th[f"{name}.mass"]
        worst["mass_rel"] = max(worst["mass_rel"], abs(m_s - float(mass[b])) / m_s)
        c_s = np.array([th[f"{name}.com.{c}"] for c in "xyz"])
        worst["com_m"] = max(worst["com_m"], float(np.max(np.abs(c_s - com[b]))))
        f = [th[f"{name}.inertia.{c}"] for c in ("xx", "yy", "zz", "xy", "xz", "yz")]
        I_s = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]])
        worst["inertia_rel"] = max(worst["inertia_rel"], float(np.max(np.abs(I_s - inertia[b])) / np.max(np.abs(I_s))))
    worst["newton_total_mass"] = float(mass.sum())
    return worst


# ------------------------------------------------------------------- check


def trajectory_row(wp, newton, steer, robot, path, law, dt, seconds=SECONDS):
    T = int(round(seconds / dt))
    sim, lay = steer_sim(steer, path, T, dt, law, [(0, 0.0, 1.0)])
    x0, U = start_and_controls(robot, lay, T, dt)
    st = steer_trajectory(sim, lay, x0, U)
    sc = NewtonRollout(wp, newton, path, lay, 1, T, dt, law, [(0, 0.0, 1.0)], per_step_solver=False)
    nw = sc.trajectory(x0, U)
    d = lay.diff(nw, st)
    d.update(steps=T, dt=dt, max_hinge_torque=float(abs(U).max()))
    if law != "matched":
        # how far steer's hinges went past the file's ranges [rad] (0: the limit laws, item 3, never acted)
        lo = sc.model.joint_limit_lower.numpy()[lay.v0:lay.nv]
        hi = sc.model.joint_limit_upper.numpy()[lay.v0:lay.nv]
        q = st[:, lay.q0:lay.nq]
        d["limit_overshoot_rad"] = float(max(0.0, (lo - q).max(), (q - hi).max()))
    return d


def gradient_row(wp, newton, steer, robot, path, T, dt, law="matched", shared_solver=True):
    terms = loss_terms(robot, steer_sim(steer, path, 1, dt, law, [(0, 0.0, 1.0)])[1])
    sim, lay = steer_sim(steer, path, T, dt, law, terms)
    x0, U = start_and_controls(robot, lay, T, dt)
    L_s, gv_s, gu_s, fdv, fdu = steer_grad_fd(sim, lay, x0, U)
    row = {"steps": T, "dt": dt, "law": law, "steer_loss": L_s,
           "steer_adjoint_vs_fd": max(nq.vec_rel(gv_s, fdv), nq.vec_rel(gu_s, fdu))}
    for tag, per_step in (("newton_tape_per_step_solver", True),) + ((("newton_tape_shared_solver", False),) if shared_solver else ()):
        L_n, gv_n, gu_n = NewtonRollout(wp, newton, path, lay, 1, T, dt, law, terms, per_step_solver=per_step).grad(x0, U)
        row[tag] = {"loss_rel": abs(L_n - L_s) / abs(L_s), "grad_v0_rel": nq.vec_rel(gv_n, gv_s),
                    "grad_u_rel": nq.vec_rel(gu_n, gu_s), "grad_rel": max(nq.vec_rel(gv_n, gv_s), nq.vec_rel(gu_n, gu_s))}
    return row


def run_check(wp, newton, steer, paths, dts=(0.01, 0.005, 0.0025), grad_steps=(10, 20), log=sys.stderr):
    out = {"newton": newton.__version__, "warp": wp.config.version, "solver": "SolverFeatherstone", "robots": {}}
    for robot, path in paths.items():
        res = {"file": path, "inertials": inertia_check(wp, newton, steer, path), "trajectory": {}, "gradient": {}}
        print(f"{robot} inertials: {res['inertials']}", file=log, flush=True)
        for law, hs in (("matched", dts[:1]), ("euler", dts), ("file", dts)):
            for dt in hs:
                t0 = time.perf_counter()
                d = trajectory_row(wp, newton, steer, robot, path, law, dt)
                d["seconds"] = time.perf_counter() - t0
                res["trajectory"][f"{law}_dt{dt:g}"] = d
                print(f"{robot} traj {law} dt={dt:g}: {d}", file=log, flush=True)
        for law in ("euler", "file"):
            r = [res["trajectory"][f"{law}_dt{dt:g}"]["hinge_q_rad"] for dt in dts]
            res[f"{law}_halving_ratios"] = [r[i + 1] / r[i] for i in range(len(r) - 1)]
        for T in grad_steps:
            t0 = time.perf_counter()
            row = gradient_row(wp, newton, steer, robot, path, T, dts[0])
            row["seconds"] = time.perf_counter() - t0
            res["gradient"][f"T{T}"] = row
            print(f"{robot} grad T={T}: {row}", file=log, flush=True)
        out["robots"][robot] = res
    return out


# ------------------------------------------------------------------- timing


def steer_timing(steer, path, lay, B, T, dt, precision, min_time, min_reps):
    """steer's module on B rollouts of T steps, one thread, the file's laws with steer's
    `euler` (the like-for-like step), contact off, the loss 1/2 (x_0(T) - 0.3)^2."""
    import numpy as np

    sim, _ = steer_sim(steer, path, T, dt, "euler", [(0, 0.3, 1.0)], precision)
    x0, U = start_and_controls("ant" if lay.free else "acrobot", lay, T, dt)
    X, Us, TH = (np.ascontiguousarray(a, dtype=sim.dtype) for a in steer_inputs(sim, lay, x0, U, B))
    eng = {"f": [], "b": []}

    def fwd():
        eng["f"].append(sim.rollout(X, Us, TH).engine_seconds)

    def fwd_bwd():
        eng["b"].append(sim.rollout(X, Us, TH, grad=True).engine_seconds)

    f = nq.per_rollout_step(nq.timed(fwd, min_time, min_reps), B, T)
    f["engine_us_per_rollout_step"] = 1e6 * sorted(eng["f"][1:])[len(eng["f"][1:]) // 2] / (B * T)
    b = nq.per_rollout_step(nq.timed(fwd_bwd, min_time, min_reps), B, T)
    b["engine_us_per_rollout_step"] = 1e6 * sorted(eng["b"][1:])[len(eng["b"][1:]) // 2] / (B * T)
    return {"forward": f, "forward_backward": b}


def run_time(wp, newton, steer, robot, path, batches, T, dt, per_step_max_batch, min_time, min_reps, log=sys.stderr):
    _, lay = steer_sim(steer, path, 1, dt, "euler", [(0, 0.3, 1.0)])
    x0, U = start_and_controls(robot, lay, T, dt)
    out = {"robot": robot, "file": path, "steps": T, "dt": dt, "threads": 1, "batches": {}}
    for B in batches:
        row = {}
        for per_step in ([False, True] if B <= per_step_max_batch else [False]):
            tag = "newton_per_step_solver" if per_step else "newton_one_solver"
            t0 = time.perf_counter()
            sc = NewtonRollout(wp, newton, path, lay, B, T, dt, "euler", [(0, 0.3, 1.0)], per_step_solver=per_step)
            sc.set_inputs(x0, U)
            build_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            sc.run_fwd_bwd()  # compiles (or loads from the cache) every kernel, forward and adjoint
            r = {"model_build_s": build_s, "first_call_s": time.perf_counter() - t0}
            if not per_step:
                r["forward"] = nq.per_rollout_step(nq.timed(sc.run_fwd, min_time, min_reps), B, T)
            r["forward_backward"] = nq.per_rollout_step(nq.timed(sc.run_fwd_bwd, min_time, min_reps), B, T)
            r["peak_rss_mb_so_far"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
            row[tag] = r
            del sc
        for prec in ("float32", "float64"):
            s = steer_timing(steer, path, lay, B, T, dt, prec, min_time, min_reps)
            for k in ("forward", "forward_backward"):
                s[k]["speedup_vs_newton_one_solver"] = row["newton_one_solver"][k]["median_s"] / s[k]["median_s"]
            row[f"steer_{prec}"] = s
        out["batches"][str(B)] = row
        print(f"{robot} B={B}: " + json.dumps({k: {kk: round(vv["us_per_rollout_step"], 3) for kk, vv in v.items()
                                                   if isinstance(vv, dict)} for k, v in row.items()}), file=log, flush=True)
    best = min(out["batches"], key=lambda b: out["batches"][b]["newton_one_solver"]["forward_backward"]["us_per_rollout_step"])
    out["newton_best_batch_forward_backward"] = int(best)
    return out


# ------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="trajectories and gradients: Newton vs steer")
    c.add_argument("--grad-steps", type=int, nargs="+", default=[10, 20])
    t = sub.add_parser("time", help="batched timing: Newton (B worlds) and steer (B rollouts)")
    t.add_argument("--batch", type=int, nargs="+", default=[1, 16, 64, 256])
    t.add_argument("--steps", type=int, default=50, help="steps of the file's timestep (50: 0.5 s)")
    t.add_argument("--min-time", type=float, default=1.0)
    t.add_argument("--min-reps", type=int, default=3)
    t.add_argument("--per-step-max-batch", type=int, default=16,
                   help="also time one Featherstone solver per step (exact gradient) up to this B")
    for p in (c, t):
        p.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
        p.add_argument("--steer-python", default=os.path.join(ROOT, "build", "python"))
        p.add_argument("--cache", default=DEFAULT_CACHE, help="tools/standard_robots.py's cache folder (the files)")
        p.add_argument("--kernel-cache", default=None, help="Warp kernel cache folder (default: Warp's)")
        p.add_argument("--json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    wp, newton = nq.import_newton(args.kernel_cache)
    init_s = time.perf_counter() - t0
    steer = nq._load_steer(args.steer_python)
    paths = {r: robot_file(r, args.cache) for r in args.robots}
    if args.cmd == "check":
        out = run_check(wp, newton, steer, paths, grad_steps=tuple(args.grad_steps))
    else:
        out = {"peer": "newton", "newton": newton.__version__, "warp": wp.config.version, "device": "cpu",
               "solver": "SolverFeatherstone", "import_init_s": init_s, "robots": {}}
        for r, p in paths.items():
            dt = float(steer_sim(steer, p, 1, None, "euler", [(0, 0.3, 1.0)])[0].dt)  # the file's timestep
            out["robots"][r] = run_time(wp, newton, steer, r, p, args.batch, args.steps, dt, args.per_step_max_batch,
                                        args.min_time, args.min_reps)
    return nq.emit_json(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
