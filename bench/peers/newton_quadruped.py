"""NVIDIA Newton (PyPI `newton` 1.8.0 on warp-lang 1.19.0, CPU device) beside steer on the
quadruped of configs/mjcf/quadruped.xml (issue 42, part 3).

Written for steer's peer benchmarks from Newton's installed sources (newton/_src/solvers/
featherstone, semi_implicit/kernels_contact.py, sim/builder.py were read, not copied). Both
engines import the same MJCF: Newton with ModelBuilder.add_mjcf, steer with MuJoCo's compiler.
The solver on Newton's side is SolverFeatherstone, the differentiable one in reduced
coordinates like steer's. SolverSemiImplicit simulates the 13 bodies in maximal coordinates held
together by joint penalty springs (joint_attach_ke 1e4, kd 100 by default), a different model of
the robot; on this quadruped (hip inertia 2e-4 kg m^2) it went to NaN within 0.1 s at h = 2,
0.5 and 0.1 ms, so it is not timed.

What the two engines share and where they differ, from the sources (h = dt):

  shared   the tree, masses, centres of mass and inertias (the script compares them), armature
           0.01 kg m^2, gravity 9.81 m/s^2, the servo tau = kp (q* - q) + u with kp = 120 N m/rad,
           semi-implicit Euler on the hinges: (M + diag(armature)) qdd = tau - c,
           qd+ = qd + h qdd, q+ = q + h qd+.
  differ   1. joint damping D = 3 N m s/rad: steer's `euler` is MuJoCo's, implicit,
              (M + h D) qd+ = M qd + h (tau - c); Newton's Featherstone adds -D qd to tau
              (explicit). The two steps differ by O(h^2) per step, O(h) over a fixed time.
           2. the free root's quaternion: Newton r+ = normalize(r + h/2 (0, w) r) (world w),
              a rotation by 2 atan(h |w| / 2); steer (MuJoCo) r+ = r exp(h w_body / 2), by
              h |w|: they differ by (h |w|)^3 / 12 per step.
           3. the servo's force limit 30 N m: steer saturates smoothly (beta = 5 /(N m));
              Featherstone ignores joint_effort_limit (no limit at all).
           4. joint limits: Newton's import gives a linear penalty ke = 1e4 N m/rad,
              kd = 10 N m s/rad that also switches the servo off past the range; steer's is
              the softplus penalty k_l w_l softplus(overshoot / w_l), k_l = 1e4, w_l = 1 mm.
           5. ground contact (the `time` scene only): Newton f_n = ke d + kd min(v_n, 0) for
              depth d > 0, friction min(kf |v_t|, mu |f_n|) along -v_t, at a contact point
              found once at t = 0 by Newton's collision pipeline (its differentiable examples
              do the same); steer f_n = k w softplus(d/w) - d_c sigma(d/w) v_n, friction
              mu N v_t / sqrt(|v_t|^2 + v_s^2), at the sphere's lowest point every step.
           6. precision: Newton's kernels are float32; steer runs float64 (and float32).

Subcommands:

  check   (A) trajectories in the air (the torso 2 m up, no contact), 0.5 s from a state with
          spin and leg swing under constant feed-forward torques, in two settings:
          `matched`: damping 0, no joint limits, no torque limit in both, so the laws are the
          same but for item 2 and float32, and the difference must be float32 rounding (also
          run 10 m up, where Featherstone's float32 spatial algebra about the world origin
          loses more);
          `file`: the file's laws (items 1, 3, 4; the servo torques stay under 30 N m), at
          h = 2, 1, 0.5 ms: the difference is item 1's O(h) and halves with h.
          (B) gradients of a terminal loss L = 1/2 sum_k w_k (s_k - s*_k)^2 over the torso's
          position and quaternion and some hinges' angles and rates at T, with respect to the
          initial velocities (18) and the constant hinge torques (12), matched setting:
          Newton's wp.Tape (one Featherstone solver, as Newton is used, and one solver per
          step: see NewtonAir), steer's adjoint, steer's centered FD (float64), at several T;
          and with the file's laws over 0.5 s at h = 2 and 1 ms (item 1's O(h) again).
  time    bench/configs/quadruped_throughput.json's scene: the quadruped standing on the
          ground, B worlds in one Newton model (replicate), its 250 steps of 2 ms; forward, and
          forward+backward (wp.Tape, per-step controls with gradients, loss 1/2 (x_T - 0.3)^2
          on the torso), first call (JIT or cache load) apart, with one solver and (B <=
          --per-step-max-batch) one solver per step; and steer's Python module on the same B,
          steps and dt, one thread (engine time and wall time), float32 and float64, in the
          same run. Newton's material is steer's imported contact law's numbers (item 5), but
          the laws differ: like work in model size, contact count and steps only. Warp's CPU
          kernels run on one thread.

Outputs JSON on stdout (and --json FILE).
"""
import argparse
import contextlib
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MJCF = os.path.join(ROOT, "configs", "mjcf", "quadruped.xml")
THROUGHPUT = os.path.join(ROOT, "bench", "configs", "quadruped_throughput.json")
NEWTON_REQUIREMENTS = ["newton==1.8.0", "warp-lang==1.19.0", "numpy==2.4.6"]

NQ, NV, NH = 19, 18, 12  # Newton's joint_q / joint_qd per world; hinges
HINGES = [f"{leg}_{j}" for leg in ("FL", "FR", "HL", "HR") for j in ("abduction", "flexion", "knee")]
# m: the torso's start in the air checks (the feet 1.67 m above the plane, 0.69 m after 0.5 s
# of fall). Not higher: Featherstone's spatial quantities are float32 about the world origin,
# so their rounding grows with the distance (at 10 m the matched trajectories differ by
# 2.7e-4 rad in orientation instead of 8e-6: `check` reports both)
AIR_HEIGHT = 2.0


# ---------------------------------------------------------------- Newton


def import_newton(cache_dir=None):
    """warp and newton with the kernel cache at cache_dir (a CI run keeps its own)."""
    warnings.filterwarnings("ignore")
    import warp as wp

    if cache_dir:
        wp.config.kernel_cache_dir = str(cache_dir)
    # Warp 1.19 reports each module load at LOG_INFO on stdout: keep stdout for the JSON
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)
    with contextlib.redirect_stdout(sys.stderr):  # warp's banner: keep stdout for the JSON
        wp.init()
        import newton
    return wp, newton


def newton_model(wp, newton, B, law="file", contact=None, requires_grad=True, path=MJCF):
    """B copies of the MJCF at path (the quadruped by default), each its own world, in one model.
    law 'matched' removes what steer and Newton do differently in the air: joint damping
    (implicit vs explicit), joint limits (two penalty laws) and nothing else (Featherstone has no
    torque limit; steer's is switched off in its config); any other law keeps the file's."""
    sub = newton.ModelBuilder()
    with contextlib.redirect_stdout(sys.stderr):
        sub.add_mjcf(path)
    builder = newton.ModelBuilder()
    # each world keeps the file's own floor plane (a static shape of that world): no
    # add_ground_plane, which would put a second plane under every foot
    builder.replicate(sub, B)
    model = builder.finalize(device="cpu", requires_grad=requires_grad)
    if law == "matched":
        model.joint_damping.zero_()
        model.joint_limit_ke.zero_()
        model.joint_limit_kd.zero_()
        # past a limit Newton also drops the servo: move the limits out of reach
        model.joint_limit_lower.fill_(-1.0e6)
        model.joint_limit_upper.fill_(1.0e6)
    if contact is not None:
        # every shape the same material: Newton averages the two shapes' ke, kd, kf, mu
        model.shape_material_ke.fill_(contact["ke"])
        model.shape_material_kd.fill_(contact["kd"])
        model.shape_material_kf.fill_(contact["kf"])
        model.shape_material_mu.fill_(contact["mu"])
    return model


def newton_inertials(model):
    """Per body of world 0: mass [kg], centre of mass [m, body frame], inertia [kg m^2]."""
    n = model.body_count // model.world_count
    return (model.body_mass.numpy()[:n], model.body_com.numpy()[:n], model.body_inertia.numpy()[:n])


# ------------------------------------------- state layouts: steer (MuJoCo) <-> Newton


def quat_rotate_wxyz(qw, v):
    """v rotated by the unit quaternion qw = (w, x, y, z): R(q) v (numpy, one vector)."""
    import numpy as np

    w, x, y, z = qw
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return R @ np.asarray(v)


def steer_to_newton(x):
    """steer's x = [p, quat (w,x,y,z), 12 q | v (root origin, world), w (body), 12 qd] ->
    Newton's joint_q = [p, quat (x,y,z,w), 12 q], joint_qd = [v_com (world), w (world), 12 qd].
    The torso's centre of mass is its origin (the box at the body's origin), so v_com = v."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    q, v = x[:NQ], x[NQ:NQ + NV]
    jq = np.concatenate([q[0:3], q[4:7], q[3:4], q[7:]])
    jqd = np.concatenate([v[0:3], quat_rotate_wxyz(q[3:7], v[3:6]), v[6:]])
    return jq, jqd


def newton_to_steer(jq, jqd):
    import numpy as np

    qw = np.concatenate([jq[6:7], jq[3:6]])
    w_body = quat_rotate_wxyz(qw * np.array([1, -1, -1, -1]), jqd[3:6])
    return np.concatenate([jq[0:3], qw, jq[7:], jqd[0:3], w_body, jqd[6:]])


def rotation_angle(qa, qb):
    """angle [rad] of the rotation between two unit quaternions (w, x, y, z)."""
    import numpy as np

    d = abs(float(np.dot(qa, qb))) / (np.linalg.norm(qa) * np.linalg.norm(qb))
    return 2.0 * math.acos(min(1.0, d))


# ------------------------------------------------------------- the air scene

def air_start(seed=0, height=AIR_HEIGHT):
    """x0 (steer layout, 37) and the constant hinge torques u (12) [N m] of the air checks: the
    torso at `height` with v = (0.3, -0.2, 0.5) m/s and a spin w_body = (1.5, -1.0, 2.0) rad/s, the
    hinges at 0.1-0.3 rad from the pose with rates of up to 2 rad/s, torques of up to 4 N m:
    the legs swing under their servos (|tau| < 30 N m, inside every joint range)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    q = np.zeros(NQ)
    q[2] = height
    ang = 0.7
    q[3:7] = [math.cos(ang / 2), math.sin(ang / 2) * 0.6, math.sin(ang / 2) * 0.0, math.sin(ang / 2) * 0.8]
    q[7:] = rng.uniform(-0.12, 0.12, NH)
    v = np.zeros(NV)
    v[0:3] = [0.3, -0.2, 0.5]
    v[3:6] = [1.5, -1.0, 2.0]
    v[6:] = rng.uniform(-2.0, 2.0, NH)
    u = rng.uniform(-3.0, 3.0, NH)
    return np.concatenate([q, v]), u


def loss_terms():
    """The terminal loss's terms: (steer state name, index in steer's x, target, weight), steer's
    limit of 16: the torso's position [m] and quaternion x, y, z, the angles [rad] of the FL and
    HR legs' 6 hinges, the rates [rad/s] of 4 hinges of the FR and HL legs."""
    import numpy as np

    rng = np.random.default_rng(7)
    terms = []
    for i, c in enumerate("xyz"):
        terms.append((f"root.p.{c}", i, [0.4, -0.3, AIR_HEIGHT - 1.5][i], 1.0))
    for i, c in enumerate("xyz"):
        terms.append((f"root.quat.{c}", 4 + i, 0.1 * (i - 1), 2.0))
    for j in (0, 1, 2, 9, 10, 11):
        terms.append((None, 7 + j, float(rng.uniform(-0.5, 0.5)), 0.5))
    for j in (4, 5, 6, 8):
        terms.append((None, NQ + 6 + j, 0.0, 0.05))
    return terms


class NewtonAir:
    """One world of the quadruped in the air, T steps under wp.Tape: the loss of loss_terms()
    at x_T, its gradient in qd_0 (18) and in the constant hinge torques (12).

    per_step_solver: Featherstone keeps its mass matrix M, Jacobian J, H = J^T M J and the
    Cholesky factor L in arrays of the solver object, overwritten every step, so a tape over
    several steps replays every step's adjoint with the last step's H and L (and sums every
    step's adjoint of H into one H.grad). True gives each step a solver of its own, so each
    keeps its matrices: the tape is then the exact adjoint of the forward."""

    def __init__(self, wp, newton, T, dt, law, per_step_solver=False):
        import numpy as np

        self.wp, self.T, self.dt = wp, T, dt
        self.model = newton_model(wp, newton, 1, law=law)
        m = self.model
        nsolvers = T if per_step_solver else 1
        self.solvers = [newton.solvers.SolverFeatherstone(m) for _ in range(nsolvers)]
        self.states = [m.state() for _ in range(T + 1)]
        self.control = m.control()
        terms = loss_terms()
        # Newton's index of each term: q slots move the quaternion to (x, y, z, w) at 3..6
        nidx = []
        for name, i, _, _ in terms:
            if i < NQ:
                nidx.append({0: 0, 1: 1, 2: 2, 4: 3, 5: 4, 6: 5}.get(i, i))
            else:
                nidx.append(NQ + (i - NQ))  # a rate: joint_qd (after NQ in the flat index)
        self.idx = wp.array(np.array(nidx, dtype=np.int32), dtype=wp.int32)
        self.tgt = wp.array(np.array([t[2] for t in terms], dtype=np.float32), dtype=float)
        self.wts = wp.array(np.array([t[3] for t in terms], dtype=np.float32), dtype=float)
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

        @wp.kernel
        def terminal_loss(jq: wp.array(dtype=float), jqd: wp.array(dtype=float), idx: wp.array(dtype=wp.int32),
                          tgt: wp.array(dtype=float), wts: wp.array(dtype=float), nq: int,
                          loss: wp.array(dtype=float)):
            k = wp.tid()
            i = idx[k]
            s = float(0.0)
            if i < nq:
                s = jq[i]
            else:
                s = jqd[i - nq]
            e = s - tgt[k]
            wp.atomic_add(loss, 0, 0.5 * wts[k] * e * e)

        self.kernel = terminal_loss

    def forward(self, x0, u):
        import numpy as np

        wp = self.wp
        jq, jqd = steer_to_newton(x0)
        self.states[0].joint_q.assign(jq.astype(np.float32))
        self.states[0].joint_qd.assign(jqd.astype(np.float32))
        f = np.zeros(NV, dtype=np.float32)
        f[6:] = u
        self.control.joint_f.assign(f)
        self.loss.zero_()
        for k in range(self.T):
            self.states[k].clear_forces()
            self.solvers[k % len(self.solvers)].step(self.states[k], self.states[k + 1], self.control, None, self.dt)
        wp.launch(self.kernel, dim=len(loss_terms()),
                  inputs=[self.states[-1].joint_q, self.states[-1].joint_qd, self.idx, self.tgt, self.wts, NQ, self.loss],
                  device="cpu")

    def trajectory(self, x0, u):
        """steer-layout states x_0 .. x_T (T+1, 37), float64 from Newton's float32."""
        import numpy as np

        self.forward(x0, u)
        return np.array([newton_to_steer(s.joint_q.numpy().astype(np.float64), s.joint_qd.numpy().astype(np.float64))
                         for s in self.states])

    def grad(self, x0, u):
        """loss, dL/dv_0 in steer's velocity layout (root v world, w body, 12 rates) and dL/du."""
        import numpy as np

        wp = self.wp
        tape = wp.Tape()
        with tape:
            self.forward(x0, u)
        tape.backward(self.loss)
        g_qd = self.states[0].joint_qd.grad.numpy().astype(np.float64)
        g_f = self.control.joint_f.grad.numpy().astype(np.float64)
        val = float(self.loss.numpy()[0])
        tape.zero()
        # Newton's w_0 is world-frame: dL/dw_body = R^T dL/dw_world
        qw = np.asarray(x0[3:7])
        gv = g_qd.copy()
        gv[3:6] = quat_rotate_wxyz(qw * np.array([1, -1, -1, -1]), g_qd[3:6])
        return val, gv, g_f[6:]


# ------------------------------------------------------------------ steer


def steer_air_config(T, dt, law, precision="float64"):
    """steer's config of the air scene: the same MJCF, the terminal loss of loss_terms()."""
    model = {"type": "articulated", "mjcf": MJCF}
    if law == "matched":
        model["all_joints"] = {"damping": 0.0}
        model["joint_limits"] = {"enabled": False}
        model["torque_limits"] = {"enabled": False}
    return {
        "name": f"newton_air_{law}",
        "model": model,
        "simulation": {"dt": dt, "steps": T, "precision": precision},
        "loss": {"terminal": [{"state": n, "target": t, "weight": w} for n, _, t, w in _named_terms()]},
        "validation": {"enabled": False},
    }


_STATE_NAMES = None


def _probe_config():
    """the bare import: steer's names and theta slots of the file's model."""
    return {"name": "probe", "model": {"type": "articulated", "mjcf": MJCF}, "simulation": {"dt": 0.002, "steps": 1},
            "loss": {"terminal": [{"state": "root.p.x", "target": 0.0}]}, "validation": {"enabled": False}}


def _named_terms():
    """loss_terms() with steer's state names filled in from the loaded module's layout."""
    names = _STATE_NAMES
    return [(n if n is not None else names[i], i, t, w) for n, i, t, w in loss_terms()]


def steer_air(steer, T, dt, law):
    """steer's Simulator on the air scene (the state names read from a first load)."""
    global _STATE_NAMES
    if _STATE_NAMES is None:
        probe = steer.load(_probe_config(), base_dir=ROOT)
        _STATE_NAMES = list(probe.state_names)
        check_steer_layout(probe)
    sim = steer.load(steer_air_config(T, dt, law), base_dir=ROOT)
    sim.threads = 1
    return sim


def check_steer_layout(sim):
    """steer's state and control layout as this script assumes it (docs/config.md, free root)."""
    names = sim.state_names
    want = ["root.p.x", "root.p.y", "root.p.z", "root.quat.w", "root.quat.x", "root.quat.y", "root.quat.z"]
    if list(names[:7]) != want or len(names) != NQ + NV or not names[7].startswith("FL_abduction"):
        raise SystemExit(f"unexpected steer state layout: {names}")
    if not (names[NQ].startswith("root.v") and names[NQ + 3].startswith("root.w") and names[NQ + 6].startswith("FL_abduction")):
        raise SystemExit(f"unexpected steer velocity layout: {names[NQ:]}")


def hinge_control_columns(sim):
    """columns of steer's u holding the 12 hinge torques, in the MJCF's joint order."""
    cols = []
    for h in HINGES:
        hit = [i for i, n in enumerate(sim.control_names) if h in n and "torque" in n]
        if len(hit) != 1:
            raise SystemExit(f"no single torque control for {h} in {sim.control_names}")
        cols.append(hit[0])
    return cols


def steer_inputs(sim, x0, u12, B=1):
    import numpy as np

    X = np.tile(np.asarray(x0, dtype=np.float64), (B, 1))
    U = np.zeros((B, sim.T, sim.nu))
    U[:, :, hinge_control_columns(sim)] = u12
    TH = np.tile(sim.theta, (B, 1))
    return X, U, TH


def steer_grad_fd(sim, x0, u12, eps=1e-6):
    """steer's loss, adjoint dL/dv_0 (18) and dL/du (12, summed over the steps: u is held
    constant), and centered FD of the same 30 derivatives in one batch of 60 rollouts."""
    import numpy as np

    X, U, TH = steer_inputs(sim, x0, u12)
    r = sim.rollout(X, U, TH, grad=True)
    cols = hinge_control_columns(sim)
    g_v = np.array(r.grad_x0[0, NQ:NQ + NV])
    g_u = np.array(r.grad_u[0][:, cols].sum(axis=0))
    n = NV + NH
    Xp = np.tile(X, (2 * n, 1))
    Up = np.tile(U, (2 * n, 1, 1))
    for k in range(n):
        for s, row in ((1.0, 2 * k), (-1.0, 2 * k + 1)):
            if k < NV:
                Xp[row, NQ + k] += s * eps
            else:
                Up[row, :, cols[k - NV]] += s * eps
    lp = sim.rollout(Xp, Up, np.tile(TH, (2 * n, 1))).loss
    fd = (lp[0::2] - lp[1::2]) / (2 * eps)
    return float(r.loss[0]), g_v, g_u, fd[:NV], fd[NV:]


def steer_trajectory(sim, x0, u12):
    import numpy as np

    X, U, TH = steer_inputs(sim, x0, u12)
    return np.array(sim.rollout(X, U, TH, trajectory_stride=1).trajectory[0])


def steer_inertials(sim):
    """steer's theta slots by name (each body's mass, com.x|y|z, inertia.xx|...|yz)."""
    return {n: float(t) for n, t in zip(sim.param_names, sim.theta)}


# ------------------------------------------------------------------ compare


def traj_diff(a, b):
    """largest differences over the steps between two steer-layout trajectories (T+1, 37)."""
    import numpy as np

    dp = float(np.max(np.abs(a[:, 0:3] - b[:, 0:3])))
    dang = max(rotation_angle(a[k, 3:7], b[k, 3:7]) for k in range(len(a)))
    dq = float(np.max(np.abs(a[:, 7:NQ] - b[:, 7:NQ])))
    dv = float(np.max(np.abs(a[:, NQ:NQ + 3] - b[:, NQ:NQ + 3])))
    dw = float(np.max(np.abs(a[:, NQ + 3:NQ + 6] - b[:, NQ + 3:NQ + 6])))
    dqd = float(np.max(np.abs(a[:, NQ + 6:] - b[:, NQ + 6:])))
    return {"root_p_m": dp, "root_angle_rad": dang, "hinge_q_rad": dq, "root_v_m_s": dv,
            "root_w_rad_s": dw, "hinge_qd_rad_s": dqd}


def vec_rel(a, b):
    """max_i |a_i - b_i| / max_i |b_i|"""
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def inertia_check(wp, newton, steer):
    """Newton's imported masses, centres and inertias against steer's theta slots."""
    import numpy as np

    model = newton_model(wp, newton, 1, requires_grad=False)
    mass, com, inertia = newton_inertials(model)
    th = steer_inertials(steer.load(_probe_config(), base_dir=ROOT))
    bodies = ["torso"] + [f"{leg}_{p}" for leg in ("FL", "FR", "HL", "HR") for p in ("hip", "thigh", "shin")]
    worst = {"mass_rel": 0.0, "com_m": 0.0, "inertia_rel": 0.0}
    for b, name in enumerate(bodies):
        keys = {k: v for k, v in th.items() if k.startswith(name + ".")}
        m_s = keys.get(f"{name}.mass")
        if m_s is None:
            return {"skipped": f"no {name}.mass slot in steer's parameters"}
        worst["mass_rel"] = max(worst["mass_rel"], abs(m_s - float(mass[b])) / m_s)
        c_s = [keys.get(f"{name}.com.{c}", 0.0) for c in "xyz"]
        worst["com_m"] = max(worst["com_m"], float(np.max(np.abs(np.array(c_s) - com[b]))))
        fi = [keys.get(f"{name}.inertia.{c}") for c in ("xx", "yy", "zz", "xy", "xz", "yz")]
        if None not in fi:
            I_s = np.array([[fi[0], fi[3], fi[4]], [fi[3], fi[1], fi[5]], [fi[4], fi[5], fi[2]]])
            worst["inertia_rel"] = max(worst["inertia_rel"],
                                       float(np.max(np.abs(I_s - inertia[b])) / np.max(np.abs(I_s))))
        else:
            worst["inertia_rel"] = None
    return worst


def _load_steer(steer_python):
    if steer_python:
        sys.path.insert(0, os.path.abspath(steer_python))
    import steer

    return steer


def run_check(wp, newton, steer, steps=250, dts=(0.002, 0.001, 0.0005), grad_steps=(10, 50, 250), per_step=True,
              log=sys.stderr):
    """Everything `check` measures, as a dict (also used by tests/crosscheck/newton_crosscheck.py)."""
    import numpy as np

    x0, u = air_start()
    out = {"newton": newton.__version__, "warp": wp.config.version, "solver": "SolverFeatherstone",
           "x0": x0.tolist(), "u_hinges": u.tolist()}
    out["inertials"] = inertia_check(wp, newton, steer)
    horizon = steps * dts[0]
    traj = {}
    cases = [("matched", dt, AIR_HEIGHT) for dt in dts] + [("matched", dts[0], 10.0)]
    cases += [("file", dt, AIR_HEIGHT) for dt in dts]
    for law, dt, height in cases:
        T = int(round(horizon / dt))
        xs = air_start(height=height)[0]
        t0 = time.perf_counter()
        nw = NewtonAir(wp, newton, T, dt, law).trajectory(xs, u)
        st = steer_trajectory(steer_air(steer, T, dt, law), xs, u)
        d = traj_diff(nw, st)
        # the servos' largest torque |kp (0 - q) + u| [N m]: under the 30 N m limit, so steer's
        # smooth saturation (Featherstone has none) stays out of the file-law rows
        d.update(steps=T, dt=dt, torso_z0=height, seconds=time.perf_counter() - t0,
                 hinge_q_range_rad=[float(st[:, 7:NQ].min()), float(st[:, 7:NQ].max())],
                 max_servo_torque=float(np.max(np.abs(-120.0 * st[:, 7:NQ] + u))))
        key = f"{law}_dt{dt:g}" + ("" if height == AIR_HEIGHT else f"_z{height:g}")
        traj[key] = d
        print(f"traj {key}: {d}", file=log, flush=True)
    out["trajectory"] = traj
    grads = {}
    for T in grad_steps:
        dt = dts[0]
        sim = steer_air(steer, T, dt, "matched")
        L_s, gv_s, gu_s, fdv, fdu = steer_grad_fd(sim, x0, u)
        row = {"steps": T, "dt": dt, "steer_loss": L_s,
               "steer_adjoint_vs_fd": max(vec_rel(gv_s, fdv), vec_rel(gu_s, fdu))}
        variants = [("newton_tape", False)] + ([("newton_tape_per_step_solver", True)] if per_step else [])
        for tag, ps in variants:
            L_n, gv_n, gu_n = NewtonAir(wp, newton, T, dt, "matched", per_step_solver=ps).grad(x0, u)
            row[tag] = {"loss_rel": abs(L_n - L_s) / abs(L_s), "grad_v0_rel": vec_rel(gv_n, gv_s),
                        "grad_u_rel": vec_rel(gu_n, gu_s)}
            if T == grad_steps[-1]:
                row[tag]["grad_v0"] = gv_n.tolist()
                row[tag]["grad_u"] = gu_n.tolist()
        if T == grad_steps[-1]:
            row["steer_grad_v0"], row["steer_grad_u"] = gv_s.tolist(), gu_s.tolist()
            row["steer_fd_v0"], row["steer_fd_u"] = fdv.tolist(), fdu.tolist()
        grads[f"T{T}"] = row
        print(f"grad T={T}: { {k: v for k, v in row.items() if not isinstance(v, list)} }", file=log, flush=True)
    # the file's laws over the trajectory check's horizon: the gradients differ by item 1's
    # first-order term too (the adjoint of explicit vs implicit damping), so halve with h
    for dt in dts[:2]:
        T = int(round(horizon / dt))
        sim = steer_air(steer, T, dt, "file")
        L_s, gv_s, gu_s, fdv, fdu = steer_grad_fd(sim, x0, u)
        L_n, gv_n, gu_n = NewtonAir(wp, newton, T, dt, "file", per_step_solver=True).grad(x0, u)
        row = {"steps": T, "dt": dt, "steer_loss": L_s, "steer_adjoint_vs_fd": max(vec_rel(gv_s, fdv), vec_rel(gu_s, fdu)),
               "newton_tape_per_step_solver": {"loss_rel": abs(L_n - L_s) / abs(L_s), "grad_v0_rel": vec_rel(gv_n, gv_s),
                                               "grad_u_rel": vec_rel(gu_n, gu_s)}}
        grads[f"file_dt{dt:g}_T{T}"] = row
        print(f"grad file dt={dt:g} T={T}: {row}", file=log, flush=True)
    out["gradient"] = grads
    return out


def emit_json(out, path):
    """Prints the result as JSON and writes it to path too when one is given; the exit code 0."""
    text = json.dumps(out, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


def cmd_check(args):
    wp, newton = import_newton(args.cache)
    steer = _load_steer(args.steer_python)
    out = run_check(wp, newton, steer, steps=args.steps, grad_steps=tuple(args.grad_steps))
    return emit_json(out, args.json)


# ------------------------------------------------------------------- timing


def timed(fn, min_time, min_reps):
    fn()
    ws, cs = [], []
    while sum(ws) < min_time or len(ws) < min_reps:
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        ws.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    return {"median_s": statistics.median(ws), "best_s": min(ws), "reps": len(ws), "cpu_median_s": statistics.median(cs)}


def per_rollout_step(t, B, T):
    return dict(t, us_per_rollout_step=1e6 * t["median_s"] / (B * T), rollout_steps_per_s=B * T / t["median_s"])


class NewtonStanding:
    """B quadrupeds standing on the ground, one world each, T steps: per-step controls
    (joint_f, the 12 hinge torques and the root's 6 forces, all with gradients), the loss
    1/2 (x_T - 0.3)^2 on each torso's x summed over the worlds. per_step_solver as NewtonAir's:
    False is Newton's usual use (one solver; its tape's gradient is wrong, see NewtonAir), True
    the exact adjoint at the memory of T solvers' matrices."""

    def __init__(self, wp, newton, B, T, dt, contact, per_step_solver=False):
        self.wp, self.B, self.T, self.dt = wp, B, T, dt
        m = newton_model(wp, newton, B, law="file", contact=contact)
        self.model = m
        self.solvers = [newton.solvers.SolverFeatherstone(m) for _ in range(T if per_step_solver else 1)]
        self.states = [m.state() for _ in range(T + 1)]
        self.controls = [m.control() for _ in range(T)]
        newton.eval_fk(m, m.joint_q, m.joint_qd, self.states[0])
        # contacts found once on the standing pose: the feet's spheres on the plane, each a
        # point fixed in the foot whose depth the contact kernel recomputes every step
        self.pipeline = newton.CollisionPipeline(m, broad_phase="explicit", requires_grad=True)
        self.contacts = self.pipeline.contacts()
        self.pipeline.collide(self.states[0], self.contacts)
        self.contact_count = int(self.contacts.rigid_contact_count.numpy()[0])
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

        @wp.kernel
        def torso_x_loss(jq: wp.array(dtype=float), nq: int, target: float, loss: wp.array(dtype=float)):
            w = wp.tid()
            e = jq[w * nq] - target
            wp.atomic_add(loss, 0, 0.5 * e * e)

        self.kernel = torso_x_loss

    def forward(self):
        self.loss.zero_()
        for k in range(self.T):
            self.states[k].clear_forces()
            self.solvers[k % len(self.solvers)].step(self.states[k], self.states[k + 1], self.controls[k],
                                                     self.contacts, self.dt)
        self.wp.launch(self.kernel, dim=self.B, inputs=[self.states[-1].joint_q, NQ, 0.3, self.loss], device="cpu")

    def run_fwd(self):
        self.forward()
        self.wp.synchronize_device("cpu")

    def run_fwd_bwd(self, keep=False):
        wp = self.wp
        tape = wp.Tape()
        with tape:
            self.forward()
        tape.backward(self.loss)
        if keep:
            import numpy as np

            self.final_q = self.states[-1].joint_q.numpy().reshape(self.B, NQ).copy()
            self.grad_u0 = np.array(self.controls[0].joint_f.grad.numpy()).reshape(self.B, NV).copy()
            self.grad_qd0 = np.array(self.states[0].joint_qd.grad.numpy()).reshape(self.B, NV).copy()
            self.loss_value = float(self.loss.numpy()[0])
            self.launches = len(tape.launches)
        tape.zero()
        wp.synchronize_device("cpu")


def steer_contact_params(steer, config_path):
    """steer's effective contact law of the throughput config (imported from the robot's mass)
    and the Newton material that is nearest to it: ke = k [N/m], kd = d_c [N s/m], mu, and
    kf [N s/m] = mu (m g / 4) / v_s, the smoothed Coulomb law's slope at v_t = 0 for a foot
    that carries a quarter of the robot's weight."""
    sim = steer.load(config_path)
    theta = dict(zip(sim.param_names, map(float, sim.theta)))
    k, d, mu = theta["contact.stiffness"], theta["contact.damping"], theta["contact.friction"]
    vs, w = theta["contact.slip_velocity"], theta["contact.smoothing"]
    total_mass = 14.4  # kg, the file's bodies (docs/legged.md)
    kf = mu * total_mass * 9.81 / 4.0 / vs
    return {"steer": {"stiffness": k, "damping": d, "friction": mu, "slip_velocity": vs, "smoothing": w},
            "newton": {"ke": k, "kd": d, "mu": mu, "kf": kf}}


def steer_timing(steer, config_path, B, T, precision, min_time, min_reps):
    import numpy as np

    cfg = json.load(open(config_path))
    cfg["simulation"]["precision"] = precision
    cfg["simulation"]["steps"] = T
    sim = steer.load(cfg, base_dir=os.path.dirname(os.path.abspath(config_path)))
    sim.threads = 1
    dt = sim.dtype
    X = np.ascontiguousarray(np.tile(sim.x0, (B, 1)), dtype=dt)
    U = np.ascontiguousarray(np.tile(sim.u, (B, T, 1)), dtype=dt)
    TH = np.ascontiguousarray(np.tile(sim.theta, (B, 1)), dtype=dt)
    eng = {"f": [], "b": []}

    def fwd():
        eng["f"].append(sim.rollout(X, U, TH).engine_seconds)

    def fwd_bwd():
        eng["b"].append(sim.rollout(X, U, TH, grad=True).engine_seconds)

    r = sim.rollout(X, U, TH, grad=True, trajectory_stride=T)
    cols = hinge_control_columns(sim)
    out = {"precision": precision, "dt": sim.dt, "steps": sim.T, "threads": 1,
           "torso_x_T": float(r.trajectory[0, -1, 0]), "torso_z_T": float(r.trajectory[0, -1, 2]),
           "max_abs_grad_u0_hinges": float(np.max(np.abs(r.grad_u[0, 0, cols]))),
           "max_abs_grad_v0": float(np.max(np.abs(r.grad_x0[0, NQ:])))}
    f = per_rollout_step(timed(fwd, min_time, min_reps), B, T)
    f["engine_median_s"] = statistics.median(eng["f"][1:])
    b = per_rollout_step(timed(fwd_bwd, min_time, min_reps), B, T)
    b["engine_median_s"] = statistics.median(eng["b"][1:])
    out["forward"], out["forward_backward"] = f, b
    return out


def cmd_time(args):
    import numpy as np

    cache = tempfile.mkdtemp(prefix="newton_cache_") if args.fresh_cache else args.cache
    t0 = time.perf_counter()
    wp, newton = import_newton(cache)
    init_s = time.perf_counter() - t0
    steer = _load_steer(args.steer_python) if not args.newton_only else None
    cfg = json.load(open(args.config))
    dt = cfg["simulation"]["dt"]
    T = args.steps or cfg["simulation"]["steps"]
    B = args.batch
    if steer is not None:
        contact = steer_contact_params(steer, args.config)
    else:
        contact = {"steer": None, "newton": {"ke": 3.0e4, "kd": 300.0, "mu": 1.0, "kf": 1.0 * 14.4 * 9.81 / 4 / 0.2}}
    out = {"peer": "newton", "newton": newton.__version__, "warp": wp.config.version, "device": "cpu",
           "solver": "SolverFeatherstone", "batch": B, "steps": T, "dt": dt, "contact": contact,
           "fresh_cache": bool(args.fresh_cache), "import_init_s": init_s}
    for per_step in ([False, True] if B <= args.per_step_max_batch else [False]):
        tag = "per_step_solver" if per_step else "one_solver"
        t0 = time.perf_counter()
        scene = NewtonStanding(wp, newton, B, T, dt, contact["newton"], per_step_solver=per_step)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        scene.run_fwd_bwd(keep=True)  # compiles (or loads from the cache) every kernel, forward and adjoint
        first_s = time.perf_counter() - t0
        q = scene.final_q
        row = {"model_build_s": build_s, "first_call_s": first_s, "contacts_per_world": scene.contact_count / B,
               "kernel_launches_per_forward_backward_record": scene.launches,
               "torso_x_T": float(q[0, 0]), "torso_z_T": float(q[0, 2]),
               "worlds_identical": bool(np.array_equal(q, np.tile(q[0], (B, 1)))),
               "max_abs_grad_u0_hinges": float(np.max(np.abs(scene.grad_u0[0, 6:]))),
               "max_abs_grad_qd0": float(np.max(np.abs(scene.grad_qd0[0])))}
        if not per_step:
            row["forward"] = per_rollout_step(timed(scene.run_fwd, args.min_time, args.min_reps), B, T)
        row["forward_backward"] = per_rollout_step(timed(scene.run_fwd_bwd, args.min_time, args.min_reps), B, T)
        row["peak_rss_mb_so_far"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        out[f"newton_{tag}"] = row
        del scene
    nf = out["newton_one_solver"]["forward"]
    nb = out["newton_one_solver"]["forward_backward"]
    if steer is not None:
        for prec in ("float32", "float64"):
            s = steer_timing(steer, args.config, B, T, prec, args.min_time, args.min_reps)
            s["forward_speedup_vs_newton"] = nf["median_s"] / s["forward"]["median_s"]
            s["forward_backward_speedup_vs_newton"] = nb["median_s"] / s["forward_backward"]["median_s"]
            if "newton_per_step_solver" in out:
                s["forward_backward_speedup_vs_newton_per_step_solver"] = (
                    out["newton_per_step_solver"]["forward_backward"]["median_s"] / s["forward_backward"]["median_s"])
            out[f"steer_{prec}"] = s
    if cache and args.fresh_cache:
        import shutil

        shutil.rmtree(cache, ignore_errors=True)
    return emit_json(out, args.json)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="air trajectories and gradients: Newton vs steer")
    c.add_argument("--steps", type=int, default=250, help="steps of 2 ms in the trajectory check")
    c.add_argument("--grad-steps", type=int, nargs="+", default=[10, 50, 250])
    t = sub.add_parser("time", help="batched timing: Newton (B worlds) and steer (B rollouts)")
    t.add_argument("--batch", type=int, default=16)
    t.add_argument("--steps", type=int, default=0, help="0: the config's (250)")
    t.add_argument("--config", default=THROUGHPUT)
    t.add_argument("--fresh-cache", action="store_true", help="JIT every kernel into a new empty cache")
    t.add_argument("--min-time", type=float, default=1.0)
    t.add_argument("--min-reps", type=int, default=3)
    t.add_argument("--newton-only", action="store_true")
    t.add_argument("--per-step-max-batch", type=int, default=1024,
                   help="also time one Featherstone solver per step (exact gradient) up to this B (memory)")
    for p in (c, t):
        p.add_argument("--steer-python", default=os.path.join(ROOT, "build", "python"),
                       help="folder holding steer's Python package (the build's python/)")
        p.add_argument("--cache", default=None, help="Warp kernel cache folder (default: Warp's)")
        p.add_argument("--json")
    args = ap.parse_args()
    return cmd_check(args) if args.cmd == "check" else cmd_time(args)


if __name__ == "__main__":
    sys.exit(main())
