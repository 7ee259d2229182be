#!/usr/bin/env python3
"""The Panda reach in MuJoCo MJX (JAX autodiff) on the CPU next to steer: same arm, servos, step, loss.

The work: B Panda arms (configs/mjcf/panda.xml with its motors replaced by <position> servos
with forcerange, as in mujoco_saturation.py), integrator implicitfast, T steps of 2 ms from
the home pose, every arm with the same joint target q* (home + 0.01 x the offsets of rollout 0 of
panda_reach's batch, so that no servo saturates: see main()) and
feed-forward torques u_k (T x 7, zero here) added inside the servo's clamp:
    tau = clamp(k_p (q* - q) - k_v qdot + u, -tau_max, tau_max),
which in MuJoCo is the position servo with ctrl = q* + u / k_p. The loss is panda_reach's,
    L = 1/2 |q_T - q*|^2 + 1/2 0.01 |qdot_T|^2 + 1/2 1e-12 sum_k |u_k|^2,
and the gradient is dL/du (T x 7) per arm.

MJX: jax.jit(jax.vmap(loss)) for the forward pass and jax.jit(jax.vmap(jax.value_and_grad(loss)))
for forward+backward, the T steps as one jax.lax.scan of mjx.step; float64 (jax_enable_x64)
or float32. steer: build/bench/bench_peer on the same config (Problem::evaluate on the CPU
backend: the packed SIMD path, K = ceil(sqrt(T)) checkpoints, the hand adjoint), with its
saturation sharpened to 1000 /(N m) so that its smooth clamp is MuJoCo's hard one to within
ln 2 / 1000 N m (steer's default is 5 /(N m); the timing does not depend on it).

Both are timed on one core (the script pins itself and steer with os.sched_setaffinity and
asks XLA for one thread): one warm-up call (MJX's compile time reported apart), then repeats
until --min-time; best and median wall time per call and per rollout-step. It also prints
rollout 0's loss and gradient from both, and their largest relative difference.

    python3 -m venv /tmp/mjx && /tmp/mjx/bin/pip install "mujoco==3.3.7" "mujoco-mjx==3.3.7"
    /tmp/mjx/bin/python bench/peers/mjx_panda.py --steer-peer build/bench/bench_peer

A bench tool only: nothing in steer's build or tests imports JAX or MuJoCo's Python package.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORE = min(os.sched_getaffinity(0))
os.sched_setaffinity(0, {CORE})
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax  # noqa: E402  (after XLA_FLAGS)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import mujoco  # noqa: E402
from mujoco import mjx  # noqa: E402

sys.path.insert(0, HERE)
from mujoco_saturation import HOME, TARGETS, mujoco_model, servo_parameters  # noqa: E402

EFFORT = 1e-12
VEL_WEIGHT = 0.01


def timed(fn, min_time, min_reps=3):
    """(first call incl. compile, best, median) wall seconds; repeats until min_time and min_reps"""
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t0
    times = []
    while len(times) < min_reps or sum(times) < min_time:
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return first, min(times), statistics.median(times)


def panda_model(dt):
    """mujoco_saturation's arm and servos at step dt, constraints off: none acts in this motion
    (the joints stay inside their ranges, nothing collides), and MJX's constraint solver is a
    lax.while_loop, which reverse mode cannot differentiate"""
    m = mujoco_model()
    m.opt.timestep = dt
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return m


def mjx_side(target, batch, steps, dt, precision, min_time):
    m = panda_model(dt)
    mx = mjx.put_model(m)
    dtype = jnp.float64 if precision == "float64" else jnp.float32
    kp = jnp.array([p[1] for p in servo_parameters()], dtype)
    q_star = jnp.array(target, dtype)
    d0 = mjx.make_data(mx).replace(qpos=jnp.array(HOME, dtype))

    def loss(u):
        def body(d, u_k):
            return mjx.step(mx, d.replace(ctrl=q_star + u_k / kp)), None

        d, _ = jax.lax.scan(body, d0, u)
        e = d.qpos - q_star
        return 0.5 * jnp.sum(e * e) + 0.5 * VEL_WEIGHT * jnp.sum(d.qvel * d.qvel) + 0.5 * EFFORT * jnp.sum(u * u)

    u = jnp.zeros((batch, steps, 7), dtype)
    # Two jitted forms of the same forward pass: jit(vmap(loss)), and the value of
    # value_and_grad with the unused gradient removed by XLA. With JAX 0.10.2 and MJX 3.3.7 on
    # the CPU the first took 3.9 s for one arm and the second 62 ms; the faster one is MJX's
    # forward figure, and the plain form is timed at B = 1 only (it grows with B).
    fwd_plain = jax.jit(jax.vmap(loss))
    fwd = jax.jit(jax.vmap(lambda uu: jax.value_and_grad(loss)(uu)[0]))
    fwd_bwd = jax.jit(jax.vmap(jax.value_and_grad(loss)))
    t_plain = timed(lambda: fwd_plain(u), min_time, 1) if batch == 1 else None
    t_fwd = timed(lambda: fwd(u), min_time)
    t_fb = timed(lambda: fwd_bwd(u), min_time)
    l, g = fwd_bwd(u)
    l_fwd = fwd(u)
    return {"loss": float(l[0]), "loss_forward": float(l_fwd[0]), "grad": np.asarray(g[0], dtype=np.float64).reshape(-1),
            "forward_plain_s": t_plain, "forward_s": t_fwd, "forward_backward_s": t_fb}


def mujoco_c_side(target, batch, steps, dt, min_time):
    """MuJoCo's C engine on the same work, forward only (it has no adjoint): mujoco.rollout with
    one MjData, so one thread, float64; the loss from the final states in numpy"""
    from mujoco import rollout
    m = panda_model(dt)
    d = mujoco.MjData(m)
    d.qpos[:] = HOME
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    x0 = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, x0, spec)
    kp = np.array([p[1] for p in servo_parameters()])
    u = np.zeros((batch, steps, 7))
    ctrl = np.asarray(target)[None, None, :] + u / kp
    x0s = np.tile(x0, (batch, 1))

    def run():
        state, _ = rollout.rollout(m, d, x0s, ctrl)
        return state

    first, best, med = timed(run, min_time)
    state = run()[0, -1]  # FULLPHYSICS: time, qpos, qvel, act, ...
    q, v = state[1:8], state[8:15]
    e = q - np.asarray(target)
    loss = 0.5 * e @ e + 0.5 * VEL_WEIGHT * v @ v
    return {"loss": float(loss), "forward_s": (first, best, med)}


def steer_side(peer, target, batch, steps, dt, precision, min_time):
    cfg = {
        "name": "mjx_panda",
        "model": {"type": "articulated", "include": "models/panda_arm.json", "integrator": "implicitfast",
                  "targets": target, "torque_limits": {"sharpness": 1000.0}},
        "simulation": {"dt": dt, "steps": steps, "precision": precision, "checkpoint_every": "sqrt"},
        "initial_state": {"q": HOME},
        "loss": {"terminal": [{"state": f"joint{j + 1}.q", "target": target[j]} for j in range(7)] +
                             [{"state": f"joint{j + 1}.v", "target": 0, "weight": VEL_WEIGHT} for j in range(7)],
                 "control_effort": EFFORT},
        "variables": {"controls": {"lower": -87, "upper": 87}},
        "validation": {"enabled": False},
    }
    work = tempfile.mkdtemp(prefix="steer_mjx.")
    os.makedirs(os.path.join(work, "models"))
    os.symlink(os.path.join(ROOT, "configs", "models", "panda_arm.json"), os.path.join(work, "models", "panda_arm.json"))
    path = os.path.join(work, "mjx_panda.json")
    json.dump(cfg, open(path, "w"))
    # the child inherits this process's one-core affinity
    out = subprocess.run([peer, path, "--batch", str(batch), "--threads", "1", "--min-time", str(min_time)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"mjx_panda: {peer} {path} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout)


def steer_grad_by_step(st, steps):
    """bench_peer's gradient, ordered by its var_names, as MJX's (step, joint) array flattened"""
    g = np.zeros((steps, 7))
    for name, v in zip(st["var_names"], st["grad"]):
        # "controls.joint<j>[<k>]" or similar: joint j, step k
        joint = int(name.split("joint")[1].split(".")[0].split("[")[0]) - 1
        step = int(name.rsplit("[", 1)[1].rstrip("]"))
        g[step, joint] = v
    return g.reshape(-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steer-peer", default=os.path.join(ROOT, "build-arm", "bench", "bench_peer"),
                    help="steer's bench_peer binary")
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 64, 256], help="arms per call (B)")
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--dt", type=float, default=0.002)
    ap.add_argument("--precision", choices=["float32", "float64"], default="float64")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--mujoco-c-only", action="store_true",
                    help="time MuJoCo's C engine against steer's forward only (float64; no MJX)")
    ap.add_argument("--target-scale", type=float, default=0.01,
                    help="joint targets: home + this x (panda_reach rollout 0's target - home)")
    a = ap.parse_args()
    if not os.access(a.steer_peer, os.X_OK):
        sys.exit(f"mjx_panda: --steer-peer {a.steer_peer} is not an executable")
    if any(b < 1 for b in a.batch) or a.steps < 1 or not a.dt > 0 or not a.min_time > 0:
        sys.exit("mjx_panda: --batch and --steps must be >= 1, --dt and --min-time > 0")
    jax.config.update("jax_enable_x64", a.precision == "float64")
    # MuJoCo 3.3.7 (the last release with MJX on PyPI) and 4.0.0 step a servo at its force
    # limit differently under implicitfast: on reach rollout 0's target 3.3.7's trajectory is
    # 0.06 rad from 4.0.0's, which steer's implicitfast follows to 2e-16 (mujoco_saturation.py).
    # Below the limits they agree (1e-12 rad at 2% of that target's offsets), so the arms get
    # the home pose + target_scale x (that target - home), where no servo saturates.
    target = [h + a.target_scale * (t - h) for h, t in zip(HOME, TARGETS["reach rollout 0"])]
    print(f"MJX {mujoco.__version__}, JAX {jax.__version__} ({jax.devices()[0]}), {a.precision}, T = {a.steps} "
          f"steps of {a.dt} s, core {CORE} only")
    if a.mujoco_c_only:
        # MuJoCo's C engine and steer only (no JAX compile): forward, float64
        print("\nBest wall time of one forward call over the B arms [ms]:\n")
        print("| B | MuJoCo C fwd | steer fwd | MuJoCo C / steer | loss, MuJoCo C | loss, steer |")
        print("|---:|---:|---:|---:|---:|---:|")
        for b in a.batch:
            mc = mujoco_c_side(target, b, a.steps, a.dt, a.min_time)
            st = steer_side(a.steer_peer, target, b, a.steps, a.dt, "float64", a.min_time)
            cf, sf = mc["forward_s"][1], st["forward"]["best_s"]
            print(f"| {b} | {1e3 * cf:.3g} | {1e3 * sf:.3g} | {cf / sf:.3g} | {mc['loss']:.12g} | {st['loss']:.12g} |")
        return
    print("\nBest wall time of one call over the B arms [ms]; ratios are peer / steer:\n")
    print("| B | MJX compile fwd / fwd+bwd [s] | MJX fwd (plain jit) | MJX fwd | MJX fwd+bwd | MuJoCo C fwd | steer fwd | steer fwd+bwd "
          "| MJX / steer, fwd | MJX / steer, fwd+bwd | MuJoCo C / steer, fwd | steer Msteps/s fwd / fwd+bwd |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    checks = []
    for b in a.batch:
        mj = mjx_side(target, b, a.steps, a.dt, a.precision, a.min_time)
        mc = mujoco_c_side(target, b, a.steps, a.dt, a.min_time)
        st = steer_side(a.steer_peer, target, b, a.steps, a.dt, a.precision, a.min_time)
        sf, sfb = st["forward"]["best_s"], st["forward_backward"]["best_s"]
        mf, mfb, cf = mj["forward_s"][1], mj["forward_backward_s"][1], mc["forward_s"][1]
        plain = "–" if mj["forward_plain_s"] is None else f"{1e3 * mj['forward_plain_s'][1]:.3g}"
        print(f"| {b} | {mj['forward_s'][0]:.1f} / {mj['forward_backward_s'][0]:.1f} | {plain} | {1e3 * mf:.3g} | {1e3 * mfb:.3g} "
              f"| {1e3 * cf:.3g} | {1e3 * sf:.3g} | {1e3 * sfb:.3g} | {mf / sf:.3g} | {mfb / sfb:.3g} | {cf / sf:.3g} "
              f"| {b * a.steps / sf / 1e6:.3g} / {b * a.steps / sfb / 1e6:.3g} |")
        g_st = steer_grad_by_step(st, a.steps)
        scale = max(np.abs(mj["grad"]).max(), np.abs(g_st).max(), 1e-300)
        checks.append((b, mj["loss"], mj["loss_forward"], mc["loss"], st["loss"], np.abs(mj["grad"] - g_st).max() / scale))
    print("\nRollout 0 (steer's in float64, from bench_peer's reference problem):\n")
    print("| B | loss, MJX fwd+bwd | loss, MJX fwd | loss, MuJoCo C | loss, steer | max_i \\|dL/du_i (MJX) − dL/du_i (steer)\\| / max \\|dL/du\\| |")
    print("|---:|---:|---:|---:|---:|---:|")
    for b, lm, lf, lc, ls, gd in checks:
        print(f"| {b} | {lm:.12g} | {lf:.12g} | {lc:.12g} | {ls:.12g} | {gd:.2g} |")


if __name__ == "__main__":
    main()
