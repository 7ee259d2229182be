"""NVIDIA Warp's bounce scene on Warp's CPU device, forward and reverse through wp.Tape.

Peer benchmark for steer (bench/peers/run_peers.sh). The scene's settings are those of
warp/examples/optim/example_bounce.py in warp-lang 1.9.1 (read from the installed package;
this script is written separately): one particle (mass 1 kg, radius 0.1 m = warp.sim's default)
at (-0.5, 1.0, 0) m with v0 = (5, -5, 0) m/s; 288 steps of 1/480 s (36 frames at 60 fps, 8
substeps) with warp.sim.SemiImplicitIntegrator (symplectic Euler) under gravity 9.80665 m/s^2;
ground plane y = 0 and a static box (centre (2, 1, 0), half extents 0.25, 1, 1: a wall whose
face is at x = 1.75 m), both with penalty contact ke = 1e4 N/m, kd = 10 N s/m, kf = 0,
mu = 0.2 (kf = 0 makes the friction force min(kf |v_t|, mu |f_n|) zero); contacts with the box
found once by wp.sim.collide with margin 10 m, as in the example; loss |x_T - (-2, 1.5, 0)|^2.
Warp's contact force on a particle of radius r: c = min(n.x - r, 0),
f = -n (ke c + kd min(n.v, 0)) (damping only while approaching).

--scene example  the scene above (wall and ground)
--scene ground   the same without the box, the scene steer's projectile model can express
                 (configs/warp_bounce.json)
--soft-contact-max N  contact slots (65536 by default, as in the example: the particle-shape
                 contact kernel then runs 65536 threads per step, almost all of which return at
                 once; 1 is enough for this scene and is the tuned Warp figure)
--kd KD          contact damping (10 in the example); --kd 0 removes the one contact-law
                 difference to steer (steer damps while the particle leaves the ground too)

Prints JSON: the loss, dL/dv0 from the tape, centered finite differences of dL/dv0 at the
given steps (float32: 1e-3, the example's, is the useful one), and wall times of one forward
and one forward+backward (tape recording, tape.backward, tape.zero), after one warm-up call
(kernel compilation reported apart), repeated until --min-time and --min-reps; best and median.
"""
import argparse
import json
import statistics
import sys
import time
import warnings


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scene", choices=["example", "ground"], default="example")
    ap.add_argument("--kd", type=float, default=10.0)
    ap.add_argument("--soft-contact-max", type=int, default=64 * 1024,
                    help="particle-shape contact slots; warp.sim's default 65536 (the example's), "
                         "each a thread of the contact kernel every step; 1 suffices here")
    ap.add_argument("--v0", default="5,-5,0", help="initial velocity vx,vy,vz [m/s]")
    ap.add_argument("--fd-eps", default="1e-2,1e-3,1e-4", help="FD steps [m/s], comma separated")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-reps", type=int, default=5)
    ap.add_argument("--json", help="write the results here (also printed)")
    args = ap.parse_args()

    warnings.filterwarnings("ignore")  # warp.sim is deprecated in 1.9 in favour of newton
    import numpy as np
    import warp as wp
    import warp.sim

    wp.config.quiet = True
    wp.init()
    device = "cpu"

    ke, kf, kd, mu = 1.0e4, 0.0, args.kd, 0.2
    frame_dt, substeps, frames = 1.0 / 60.0, 8, 36
    dt = frame_dt / substeps
    steps = frames * substeps
    target = wp.vec3(-2.0, 1.5, 0.0)
    v0 = [float(s) for s in args.v0.split(",")]

    @wp.kernel
    def sq_distance(pos: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
        d = pos[0] - target
        loss[0] = wp.dot(d, d)

    builder = wp.sim.ModelBuilder()
    builder.soft_contact_max = args.soft_contact_max
    builder.add_particle(pos=wp.vec3(-0.5, 1.0, 0.0), vel=wp.vec3(*v0), mass=1.0)
    if args.scene == "example":
        builder.add_shape_box(body=-1, pos=wp.vec3(2.0, 1.0, 0.0), hx=0.25, hy=1.0, hz=1.0, ke=ke, kf=kf, kd=kd, mu=mu)
    model = builder.finalize(device=device, requires_grad=True)
    model.ground = True
    model.soft_contact_ke = ke
    model.soft_contact_kf = kf
    model.soft_contact_kd = kd
    model.soft_contact_mu = mu
    model.soft_contact_margin = 10.0
    model.soft_contact_restitution = 1.0
    integrator = wp.sim.SemiImplicitIntegrator()
    loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)
    states = [model.state() for _ in range(steps + 1)]
    wp.sim.collide(model, states[0])  # one-shot contacts against the box (fixed normal)
    qd0 = states[0].particle_qd

    def forward():
        for i in range(steps):
            states[i].clear_forces()
            integrator.simulate(model, states[i], states[i + 1], dt)
        wp.launch(sq_distance, dim=1, inputs=[states[-1].particle_q, target, loss], device=device)

    def run_fwd():
        forward()
        wp.synchronize_device(device)

    grad_box = {}

    def run_fwd_bwd():
        tape = wp.Tape()
        with tape:
            forward()
        tape.backward(loss)
        grad_box["g"] = qd0.grad.numpy()[0].copy()
        grad_box["loss"] = float(loss.numpy()[0])
        tape.zero()
        wp.synchronize_device(device)

    t0 = time.perf_counter()
    run_fwd_bwd()  # compiles (or loads from the kernel cache) every kernel
    first_s = time.perf_counter() - t0

    def timed(fn):
        fn()
        ws, cs = [], []
        while sum(ws) < args.min_time or len(ws) < args.min_reps:
            c0 = time.process_time()
            t0 = time.perf_counter()
            fn()
            ws.append(time.perf_counter() - t0)
            cs.append(time.process_time() - c0)
        return {"best_s": min(ws), "median_s": statistics.median(ws), "reps": len(ws), "cpu_best_s": min(cs)}

    fwd = timed(run_fwd)
    fb = timed(run_fwd_bwd)
    run_fwd_bwd()
    grad = [float(g) for g in grad_box["g"]]
    loss_val = grad_box["loss"]
    x_T = [float(c) for c in states[-1].particle_q.numpy()[0]]

    # centered finite differences of dL/dv0
    fd = {}
    base = np.array(v0, dtype=np.float32)
    for eps in [float(e) for e in args.fd_eps.split(",") if e]:
        col = []
        for i in range(3):
            vals = []
            for sgn in (1.0, -1.0):
                v = base.copy()
                v[i] += sgn * eps
                qd0.assign(v.reshape(1, 3))
                forward()
                vals.append(float(loss.numpy()[0]))
            col.append((vals[0] - vals[1]) / (2.0 * eps))
        qd0.assign(base.reshape(1, 3))
        err = max(abs(a - b) for a, b in zip(grad, col)) / max(max(abs(g) for g in grad), 1e-12)
        fd["%g" % eps] = {"fd": col, "max_abs_err_over_max_grad": err}

    launches = None
    try:
        tape = wp.Tape()
        with tape:
            forward()
        launches = len(tape.launches)
        tape.zero()
    except Exception:  # noqa: BLE001 - the count is informative only
        pass

    out = {
        "peer": "warp",
        "warp_version": wp.config.version,
        "device": device,
        "scene": args.scene,
        "kd": kd,
        "soft_contact_max": model.soft_contact_max,
        "steps": steps,
        "dt": dt,
        "v0": v0,
        "kernel_launches_per_forward": launches,
        "first_call_s": first_s,
        "loss": loss_val,
        "x_T": x_T,
        "grad_v0": grad,
        "fd": fd,
        "forward": fwd,
        "forward_backward": fb,
    }
    text = json.dumps(out, indent=1)
    if args.json:
        open(args.json, "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
