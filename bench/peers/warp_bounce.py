"""NVIDIA Warp's bounce scene (warp-lang 1.9.x, warp/examples/optim/example_bounce.py) on Warp's
CPU device, next to steer's configs/warp_bounce.json.

Written for steer's peer benchmark (bench/peers/run_peers.sh) from the settings and contact laws
of the installed warp-lang package (the example and warp/sim/integrator_euler.py were read, not
copied). The scene: one particle (mass 1 kg, radius 0.1 m = warp.sim's default) at
(-0.5, 1.0, 0) m with v0 = (5, -5, 0) m/s; 36 frames of 8 substeps = 288 steps of 1/480 s with
warp.sim.SemiImplicitIntegrator (symplectic Euler) under gravity 9.80665 m/s^2; the ground plane
y = 0 and a static box (centre (2, 1, 0), half extents 0.25, 1, 1) with penalty contact
ke = 1e4 N/m, kd = 10 N s/m, kf = 0, mu = 0.2; the box's contacts found once by wp.sim.collide
(margin 10 m) on the initial state; loss |x_T - (-2, 1.5, 0)|^2. For a plane of normal n the
force on the particle is f = -n (ke c + kd min(v_n, 0)) while the gap c = n.(x - x_plane) - r is
negative (the ground: c < 0; the box: c <= 0), damped only while approaching; kf = 0 makes both
friction terms zero. The box's one-shot contact is the point (1.75, 1, 0) with normal -x, so the
box acts as the half-space wall x = 1.75 m for the whole rollout.

Subcommands:

  check   loss and dL/dv0 of the scene three ways: warp.sim as shipped (float32, wp.Tape),
          a float64 Warp program of the same laws written here (wp.vec3d kernels, wp.Tape: the
          same integrator, ground and wall kernels' arithmetic, the wall's contact point and
          normal taken from warp.sim's own wp.sim.collide), and steer (bench_peer on
          configs/warp_bounce.json, float64). Prints JSON with every value, centered finite
          differences of each, and the relative differences; exits 1 when steer and the
          float64 Warp program differ by more than --tol (1e-6) in the loss or any gradient
          component, or when the float64 program and warp.sim differ by more than --tol32
          (1e-4 relative: float32 rounding over 288 steps through two stiff contacts).

  time    the scene with B particles in one warp.sim model (--batch B): every particle its own
          copy of the scene (same start, same box contact, ground), loss = sum over particles.
          The particles do not interact: warp.sim's particle-particle kernel runs only on a
          hash grid the script never builds, and the script checks that every particle's final
          position and dL/dv0 equal particle 0's bit for bit. Reports the first call (kernel
          compilation or cache load; with --fresh-cache, a new empty kernel cache, so it is
          the full JIT compile) apart, then wall and CPU time of one forward and one
          forward+backward (tape record, tape.backward, tape.zero) repeated for --min-time
          seconds; per call and per rollout (divided by B). --soft-contact-max (default B:
          one slot per particle, the least work; the example's default is 65536) sets the
          particle-shape contact slots, each a thread of the contact kernel every step.
"""
import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

KE, KD, KF, MU = 1.0e4, 10.0, 0.0, 0.2
FRAME_DT, SUBSTEPS, FRAMES = 1.0 / 60.0, 8, 36
DT = FRAME_DT / SUBSTEPS
STEPS = FRAMES * SUBSTEPS
START, V0, TARGET = (-0.5, 1.0, 0.0), (5.0, -5.0, 0.0), (-2.0, 1.5, 0.0)
GRAVITY = 9.80665


def import_warp(cache_dir=None):
    warnings.filterwarnings("ignore")  # warp.sim is deprecated in 1.9 in favour of newton
    import warp as wp

    if cache_dir:
        wp.config.kernel_cache_dir = cache_dir
    wp.config.quiet = True
    # warp prints its notices (warp.sim's deprecation) on stdout: keep stdout for the JSON
    with contextlib.redirect_stdout(sys.stderr):
        wp.init()
        import warp.sim  # noqa: F401

    return wp


class SimScene:
    """The example's scene in warp.sim (float32) with B copies of the particle."""

    def __init__(self, wp, batch, soft_contact_max):
        self.wp, self.B = wp, batch
        builder = wp.sim.ModelBuilder()
        builder.soft_contact_max = soft_contact_max
        for _ in range(batch):
            builder.add_particle(pos=wp.vec3(*START), vel=wp.vec3(*V0), mass=1.0)
        builder.add_shape_box(body=-1, pos=wp.vec3(2.0, 1.0, 0.0), hx=0.25, hy=1.0, hz=1.0, ke=KE, kf=KF, kd=KD, mu=MU)
        model = builder.finalize(device="cpu", requires_grad=True)
        model.ground = True
        model.soft_contact_ke = KE
        model.soft_contact_kf = KF
        model.soft_contact_kd = KD
        model.soft_contact_mu = MU
        model.soft_contact_margin = 10.0
        model.soft_contact_restitution = 1.0
        self.model = model
        self.integrator = wp.sim.SemiImplicitIntegrator()
        self.loss = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
        self.states = [model.state() for _ in range(STEPS + 1)]
        wp.sim.collide(model, self.states[0])  # one-shot contacts, as in the example
        self.qd0 = self.states[0].particle_qd

        @wp.kernel
        def sq_distance_sum(pos: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
            i = wp.tid()
            d = pos[i] - target
            wp.atomic_add(loss, 0, wp.dot(d, d))

        self.loss_kernel = sq_distance_sum

    def contacts(self):
        n = int(self.model.soft_contact_count.numpy()[0])
        return {
            "count": n,
            "body_pos": self.model.soft_contact_body_pos.numpy()[:n].tolist(),
            "normal": self.model.soft_contact_normal.numpy()[:n].tolist(),
        }

    def forward(self):
        wp = self.wp
        self.loss.zero_()
        for i in range(STEPS):
            self.states[i].clear_forces()
            self.integrator.simulate(self.model, self.states[i], self.states[i + 1], DT)
        wp.launch(self.loss_kernel, dim=self.B, inputs=[self.states[-1].particle_q, wp.vec3(*TARGET), self.loss], device="cpu")

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
            self.grad = self.qd0.grad.numpy().copy()
            self.loss_value = float(self.loss.numpy()[0])
            self.x_T = self.states[-1].particle_q.numpy().copy()
        tape.zero()
        wp.synchronize_device("cpu")

    def loss_at(self, v):
        import numpy as np

        self.qd0.assign(np.tile(np.array(v, dtype=np.float32), (self.B, 1)))
        self.forward()
        val = float(self.loss.numpy()[0])
        self.qd0.assign(np.tile(np.array(V0, dtype=np.float32), (self.B, 1)))
        return val


class Float64Scene:
    """The same laws as float64 Warp kernels (one particle): warp.sim's ground contact
    (eval_particle_ground_contacts), its particle-shape contact against the fixed contact point
    and normal found by wp.sim.collide (eval_particle_contacts), and integrate_particles."""

    def __init__(self, wp, wall_point, wall_normal):
        self.wp = wp
        f64 = wp.float64

        @wp.kernel
        def step64(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), wall_p: wp.vec3d, wall_n: wp.vec3d,
                   radius: f64, ke: f64, kd: f64, inv_mass: f64, gravity: wp.vec3d, dt: f64,
                   x_out: wp.array(dtype=wp.vec3d), v_out: wp.array(dtype=wp.vec3d)):
            tid = wp.tid()
            xi = x[tid]
            vi = v[tid]
            zero = f64(0.0)
            f = wp.vec3d(zero, zero, zero)
            # ground y = 0, n = +y: active while c < 0; kf = 0, so no friction force
            n = wp.vec3d(zero, f64(1.0), zero)
            c = wp.min(wp.dot(n, xi) - radius, zero)
            if c < zero:
                fn = c * ke + wp.min(wp.dot(n, vi), zero) * kd
                f = f - n * fn
            # the box's fixed contact: active while c <= 0 (Warp returns for c > adhesion = 0)
            cw = wp.dot(wall_n, xi - wall_p) - radius
            if cw <= zero:
                f = f - (wall_n * (cw * ke) + wall_n * (wp.min(wp.dot(wall_n, vi), zero) * kd))
            # semi-implicit Euler
            v1 = vi + (f * inv_mass + gravity) * dt
            x_out[tid] = xi + v1 * dt
            v_out[tid] = v1

        @wp.kernel
        def sq_distance64(pos: wp.array(dtype=wp.vec3d), target: wp.vec3d, loss: wp.array(dtype=wp.float64)):
            d = pos[0] - target
            loss[0] = wp.dot(d, d)

        self.step64, self.loss64 = step64, sq_distance64
        self.xs = [wp.zeros(1, dtype=wp.vec3d, device="cpu", requires_grad=True) for _ in range(STEPS + 1)]
        self.vs = [wp.zeros(1, dtype=wp.vec3d, device="cpu", requires_grad=True) for _ in range(STEPS + 1)]
        self.loss = wp.zeros(1, dtype=wp.float64, device="cpu", requires_grad=True)
        self.wall_p = wp.vec3d(*wall_point)
        self.wall_n = wp.vec3d(*wall_normal)

    def forward(self, v0):
        wp = self.wp
        import numpy as np

        self.xs[0].assign(np.array([START], dtype=np.float64))
        self.vs[0].assign(np.array([v0], dtype=np.float64))
        for i in range(STEPS):
            wp.launch(self.step64, dim=1,
                      inputs=[self.xs[i], self.vs[i], self.wall_p, self.wall_n, wp.float64(0.1), wp.float64(KE),
                              wp.float64(KD), wp.float64(1.0), wp.vec3d(0.0, -GRAVITY, 0.0), wp.float64(DT)],
                      outputs=[self.xs[i + 1], self.vs[i + 1]], device="cpu")
        wp.launch(self.loss64, dim=1, inputs=[self.xs[-1], wp.vec3d(*TARGET), self.loss], device="cpu")
        return float(self.loss.numpy()[0])

    def grad(self, v0):
        wp = self.wp
        tape = wp.Tape()
        with tape:
            val = self.forward(v0)
        tape.backward(self.loss)
        g = self.vs[0].grad.numpy()[0].tolist()
        tape.zero()
        return val, g


def fd_grad(loss_at, v0, eps):
    out = []
    for i in range(3):
        vp, vm = list(v0), list(v0)
        vp[i] += eps
        vm[i] -= eps
        out.append((loss_at(vp) - loss_at(vm)) / (2.0 * eps))
    return out


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def vec_rel(a, b):
    """largest componentwise difference over the largest component: max |a_i - b_i| / max |b_i|"""
    return max(abs(x - y) for x, y in zip(a, b)) / max(max(abs(y) for y in b), 1e-300)


def cmd_check(args):
    wp = import_warp()
    sim = SimScene(wp, 1, 64 * 1024)  # as shipped: the example's default contact slots
    sim.run_fwd_bwd(keep=True)
    contacts = sim.contacts()
    wall_point, wall_normal = contacts["body_pos"][0], contacts["normal"][0]
    sim_grad = [float(g) for g in sim.grad[0]]
    sim_fd = fd_grad(sim.loss_at, V0, 1e-3)  # the example's check_grad step
    f64 = Float64Scene(wp, wall_point, wall_normal)
    f64_loss, f64_grad = f64.grad(V0)
    f64_fd = fd_grad(f64.forward, V0, 1e-6)
    st = json.loads(subprocess.run([args.steer_peer, args.config, "--no-timing", "--fd", "1e-7"], check=True,
                                   capture_output=True, text=True).stdout)
    st_loss, st_grad = st["loss"], st["grad"][:3]
    out = {
        "warp_version": wp.config.version,
        "box_contact": {"point": wall_point, "normal": wall_normal, "count": contacts["count"]},
        "warp_sim_float32": {"loss": sim.loss_value, "grad_v0": sim_grad, "fd_1e-3": sim_fd,
                             "x_T": sim.x_T[0].tolist()},
        "warp_float64": {"loss": f64_loss, "grad_v0": f64_grad, "fd_1e-6": f64_fd},
        "steer_float64": {"loss": st_loss, "grad_v0": st_grad, "fd": st.get("fd")},
        "steer_vs_warp_float64": {"loss_rel": rel(st_loss, f64_loss), "grad_rel": vec_rel(st_grad, f64_grad)},
        "warp_float64_vs_warp_sim_float32": {"loss_rel": rel(f64_loss, sim.loss_value),
                                             "grad_rel": vec_rel(sim_grad, f64_grad)},
        "steer_vs_warp_sim_float32": {"loss_rel": rel(st_loss, sim.loss_value), "grad_rel": vec_rel(sim_grad, st_grad)},
        "tol": args.tol,
        "tol32": args.tol32,
    }
    a, b = out["steer_vs_warp_float64"], out["warp_float64_vs_warp_sim_float32"]
    ok = a["loss_rel"] <= args.tol and a["grad_rel"] <= args.tol and b["loss_rel"] <= args.tol32 and b["grad_rel"] <= args.tol32
    out["pass"] = ok
    print(json.dumps(out, indent=1))
    return 0 if ok else 1


def timed(fn, min_time, min_reps):
    fn()
    ws, cs = [], []
    while sum(ws) < min_time or len(ws) < min_reps:
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        ws.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    return {"best_s": min(ws), "median_s": statistics.median(ws), "reps": len(ws), "cpu_best_s": min(cs)}


def per_rollout(t, B):
    return dict(t, per_rollout_best_s=t["best_s"] / B, per_rollout_median_s=t["median_s"] / B,
                per_rollout_cpu_best_s=t["cpu_best_s"] / B)


def cmd_time(args):
    cache = tempfile.mkdtemp(prefix="warp_cache_") if args.fresh_cache else None
    t_import = time.perf_counter()
    wp = import_warp(cache)
    init_s = time.perf_counter() - t_import
    B = args.batch
    t0 = time.perf_counter()
    sim = SimScene(wp, B, args.soft_contact_max or B)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sim.run_fwd_bwd(keep=True)  # compiles (or loads from the kernel cache) every kernel
    first_s = time.perf_counter() - t0
    import numpy as np

    g, x = sim.grad, sim.x_T
    out = {
        "peer": "warp", "warp_version": wp.config.version, "device": "cpu", "batch": B,
        "soft_contact_max": sim.model.soft_contact_max, "contacts": int(sim.model.soft_contact_count.numpy()[0]),
        "fresh_cache": bool(args.fresh_cache), "init_s": init_s, "model_build_s": build_s, "first_call_s": first_s,
        "loss_per_rollout": sim.loss_value / B, "grad_v0_particle0": g[0].tolist(), "x_T_particle0": x[0].tolist(),
        "particles_identical": bool(np.array_equal(g, np.tile(g[0], (B, 1))) and np.array_equal(x, np.tile(x[0], (B, 1)))),
        "grad_max_abs_dev_from_particle0": float(np.max(np.abs(g - g[0]))),
    }
    try:
        tape = wp.Tape()
        with tape:
            sim.forward()
        out["kernel_launches_per_forward"] = len(tape.launches)
        tape.zero()
    except Exception:  # noqa: BLE001 - informative only
        pass
    out["forward"] = per_rollout(timed(sim.run_fwd, args.min_time, args.min_reps), B)
    out["forward_backward"] = per_rollout(timed(sim.run_fwd_bwd, args.min_time, args.min_reps), B)
    if cache:
        import shutil

        shutil.rmtree(cache, ignore_errors=True)
    text = json.dumps(out, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="loss and gradient: warp.sim float32, Warp float64, steer")
    c.add_argument("--steer-peer", default=os.path.join(root, "build-peers", "bench", "bench_peer"))
    c.add_argument("--config", default=os.path.join(root, "configs", "warp_bounce.json"))
    c.add_argument("--tol", type=float, default=1e-6)
    c.add_argument("--tol32", type=float, default=1e-4)
    t = sub.add_parser("time", help="batched warp.sim timing")
    t.add_argument("--batch", type=int, default=1)
    t.add_argument("--soft-contact-max", type=int, default=0, help="particle-shape contact slots (0 = B)")
    t.add_argument("--fresh-cache", action="store_true", help="compile every kernel into a new empty cache")
    t.add_argument("--min-time", type=float, default=1.0)
    t.add_argument("--min-reps", type=int, default=3)
    t.add_argument("--json")
    args = ap.parse_args()
    return cmd_check(args) if args.cmd == "check" else cmd_time(args)


if __name__ == "__main__":
    sys.exit(main())
