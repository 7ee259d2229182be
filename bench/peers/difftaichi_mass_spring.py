"""DiffTaichi-style mass-spring robot with Taichi's reverse-mode autodiff (ti.ad.Tape), on the CPU.

Peer benchmark for steer (bench/peers/run_peers.sh). Written from the physics of steer's
mass_spring model (include/steer/models/mass_spring.h), not from the DiffTaichi example's code,
in that example's style: fields indexed by time step, one Taichi kernel per stage per step
(actuation, spring forces scattered with atomics, integration), the loss in its own kernel,
and the whole rollout taped and reversed by ti.ad.Tape.

The robot and its settings are read from a steer config (default configs/difftaichi_robot_a.json,
DiffTaichi's robot A: 6 particles, 11 springs, all actuated; dt 0.004 s, 681 steps, gravity
4.8 m/s^2, velocity damping exp(-15 dt), ground y = 0.1 m, unit masses, 10-phase sinusoid bank).
One step of length h at t = k h (identical to steer's, so the two must agree to rounding):

  act_a = tanh(sum_j w_aj sin(omega t + 2 pi j/n) + b_a)
  L_s   = L0_s (1 + alpha_s act_a(s));  d = x_b - x_a, l = |d|, n = d/l
  F_s   = k_s (l - L_s) + c_s (v_b - v_a).n       (+F_s n on a, -F_s n on b)
  z     = (y_g - y)/w_g;  E = k_g w_g softplus(z)
  F_n   = E - d_g sigmoid(z) v_y;  F_t = -mu E v_x / sqrt(v_x^2 + v_eps^2)
  v'    = exp(-zeta h) v + h ((f + F_ground)/m - g y^);  x' = x + h v'
  loss  = -(c_x(x_T) - c_x(x_0)),  c_x = sum_i m_i x_i / sum_i m_i

Differences from the DiffTaichi example (by design, so that the gradient can be checked
against steer's): its ground is a velocity projection at y = 0.1 that stops a particle
moving into the ground (here the compliant penalty ground with smoothed Coulomb friction of
steer's config: k_g 1e4 N/m, d_g 50 N s/m, 1 cm smoothing, mu 1 smoothed over 0.05 m/s); its
actuation comes from a small neural network fed with the same sinusoids and the centre of mass
(here the open-loop bank tanh(W sin + b), no network); its loss is particle 0's x (here the
centre-of-mass x displacement); its spring length has +1e-4 m added (here none).

Usage:
  difftaichi_mass_spring.py [--config configs/difftaichi_robot_a.json] [--batch B] [--threads N]
      [--precision float64|float32] [--min-time S] [--vars-out vars.json] [--json out.json]
Timing: one warm-up call (JIT compilation, reported apart), then forward-only and
forward+backward calls repeated until --min-time seconds and at least --min-reps calls;
best and median wall time per call and per rollout (B robots are simulated in the same
fields, parallel over (rollout, particle/spring)).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time


def weights_for(n_act, n_phase):
    """The actuation weights and biases both simulators use: fixed, of order 0.5, no symmetry."""
    w = [[0.5 * math.sin(0.37 * (a * n_phase + j) + 1.0) for j in range(n_phase)] for a in range(n_act)]
    b = [0.1 * math.cos(1.3 * a) for a in range(n_act)]
    return w, b


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(here, "..", "..", "configs", "difftaichi_robot_a.json"))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", choices=["float64", "float32"], default="float64")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-reps", type=int, default=5)
    ap.add_argument("--vars-out", help="write the weights and biases as {steer variable name: value}")
    ap.add_argument("--json", help="write the results here (also printed)")
    args = ap.parse_args()

    import taichi as ti

    cfg = json.load(open(args.config))
    model, sim = cfg["model"], cfg["simulation"]
    assert model["type"] == "mass_spring" and model.get("dim", 2) == 2
    robot = model["robot"]
    act_cfg = model.get("actuation", {})
    assert act_cfg.get("type", "sinusoid") == "sinusoid"
    ground = model["ground"]
    assert ground.get("type", "penalty") == "penalty"
    pos = [p[:2] for p in robot["particles"]]
    springs = robot["springs"]
    N, S = len(pos), len(springs)
    P = int(act_cfg.get("phases", 10))
    omega = float(act_cfg.get("frequency", 10.0))
    dt, T = float(sim["dt"]), int(sim["steps"])
    mass = float(model.get("particle_mass", 1.0))
    spring_c = float(model.get("spring_damping", 0.0))
    g = float(model["gravity"])
    zeta = float(model["velocity_damping"])
    yg, kg, dg = float(ground["height"]), float(ground["stiffness"]), float(ground["damping"])
    wg, mu, ve = float(ground["smoothing"]), float(ground["friction"]), float(ground["friction_smoothing"])
    act_of = []
    A = 0
    for sp in springs:
        if sp[4] != 0.0:
            act_of.append(A)
            A += 1
        else:
            act_of.append(-1)
    B = args.batch

    fp = ti.f64 if args.precision == "float64" else ti.f32
    ti.init(arch=ti.cpu, default_fp=fp, cpu_max_num_threads=args.threads, offline_cache=True, log_level=ti.WARN)

    vec = ti.types.vector(2, fp)
    x = ti.Vector.field(2, fp, shape=(B, T + 1, N), needs_grad=True)
    v = ti.Vector.field(2, fp, shape=(B, T + 1, N), needs_grad=True)
    f = ti.Vector.field(2, fp, shape=(B, T, N), needs_grad=True)  # spring force sum per particle
    act = ti.field(fp, shape=(B, T, max(A, 1)), needs_grad=True)
    w = ti.field(fp, shape=(B, max(A, 1), P), needs_grad=True)
    bias = ti.field(fp, shape=(B, max(A, 1)), needs_grad=True)
    loss = ti.field(fp, shape=(), needs_grad=True)
    s_a = ti.field(ti.i32, shape=S)
    s_b = ti.field(ti.i32, shape=S)
    s_act = ti.field(ti.i32, shape=S)  # actuator, 0 for a passive spring (its amplitude is 0)
    s_L0 = ti.field(fp, shape=S)
    s_k = ti.field(fp, shape=S)
    s_amp = ti.field(fp, shape=S)
    for s, sp in enumerate(springs):
        s_a[s], s_b[s] = int(sp[0]), int(sp[1])
        s_L0[s], s_k[s], s_amp[s] = float(sp[2]), float(sp[3]), float(sp[4])
        s_act[s] = max(act_of[s], 0)

    two_pi_n = 2.0 * math.pi / P
    decay = math.exp(-zeta * dt)

    @ti.func
    def log1p_pos(e):
        # log(1 + e) for 0 < e <= 1; the series keeps the relative accuracy of a tiny e
        r = ti.log(1.0 + e)
        if e < 1e-4:
            r = e * (1.0 - e * (0.5 - e * (1.0 / 3.0 - 0.25 * e)))
        return r

    @ti.func
    def softplus(z):
        # max(z, 0) + log(1 + e^-|z|), steer's overflow-safe split
        return ti.max(z, 0.0) + log1p_pos(ti.exp(-ti.abs(z)))

    @ti.func
    def sigmoid(z):
        e = ti.exp(-ti.abs(z))
        return ti.select(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    @ti.kernel
    def actuation(t: ti.i32):
        for r, a in ti.ndrange(B, A):
            tt = t * dt
            z = bias[r, a]
            for j in ti.static(range(P)):
                z += w[r, a, j] * ti.sin(omega * tt + two_pi_n * j)
            act[r, t, a] = ti.tanh(z)

    @ti.kernel
    def spring_forces(t: ti.i32):
        for r, s in ti.ndrange(B, S):
            ia, ib = s_a[s], s_b[s]
            d = x[r, t, ib] - x[r, t, ia]
            l = ti.sqrt(d.dot(d))
            n = d / ti.max(l, 1e-12)
            dvn = (v[r, t, ib] - v[r, t, ia]).dot(n)
            target = s_L0[s] * (1.0 + s_amp[s] * act[r, t, s_act[s]])
            F = s_k[s] * (l - target) + spring_c * dvn
            f[r, t, ia] += F * n
            f[r, t, ib] -= F * n

    @ti.kernel
    def advance(t: ti.i32):
        for r, i in ti.ndrange(B, N):
            xi = x[r, t, i]
            vi = v[r, t, i]
            z = (yg - xi[1]) / wg
            E = kg * wg * softplus(z)
            fn = E - dg * sigmoid(z) * vi[1]
            ft = -mu * E * vi[0] / ti.sqrt(vi[0] * vi[0] + ve * ve)
            acc = (f[r, t, i] + vec(ft, fn)) / mass - vec(0.0, g)
            vn = decay * vi + dt * acc
            v[r, t + 1, i] = vn
            x[r, t + 1, i] = xi + dt * vn

    @ti.kernel
    def compute_loss():
        for r, i in ti.ndrange(B, N):
            loss[None] += -(x[r, T, i][0] - x[r, 0, i][0]) / N  # unit masses: c_x = mean x

    def reset():
        f.fill(0.0)
        loss[None] = 0.0

    def forward():
        for t in range(T):
            actuation(t)
            spring_forces(t)
            advance(t)
        compute_loss()

    # initial state: rest positions, at rest; the same weights in every rollout
    wv, bv = weights_for(A, P)
    for r in range(B):
        for i in range(N):
            x[r, 0, i] = pos[i]
            v[r, 0, i] = [0.0, 0.0]
        for a in range(A):
            bias[r, a] = bv[a]
            for j in range(P):
                w[r, a, j] = wv[a][j]

    def run_fwd():
        reset()
        forward()
        ti.sync()

    def run_fwd_bwd():
        reset()
        with ti.ad.Tape(loss=loss):
            forward()
        ti.sync()

    t0 = time.perf_counter()
    run_fwd_bwd()
    compile_s = time.perf_counter() - t0

    def timed(fn):
        fn()  # warm-up
        ws, cs = [], []
        while sum(ws) < args.min_time or len(ws) < args.min_reps:
            c0 = time.process_time()
            t0 = time.perf_counter()
            fn()
            ws.append(time.perf_counter() - t0)
            cs.append(time.process_time() - c0)
        return {"best_s": min(ws), "median_s": statistics.median(ws), "reps": len(ws),
                "cpu_best_s": min(cs), "per_rollout_cpu_best_s": min(cs) / B,
                "per_rollout_best_s": min(ws) / B, "per_rollout_median_s": statistics.median(ws) / B}

    fwd = timed(run_fwd)
    fb = timed(run_fwd_bwd)
    # gradient of rollout 0 (loss[None] sums the B identical rollouts; each rollout's
    # variables only reach its own term)
    run_fwd_bwd()
    gw = w.grad.to_numpy()[0]
    gb = bias.grad.to_numpy()[0]
    grad = {}
    for a in range(A):
        for j in range(P):
            grad["theta.actuator[%d].weight[%d]" % (a, j)] = float(gw[a, j])
        grad["theta.actuator[%d].bias" % a] = float(gb[a])
    out = {
        "peer": "taichi",
        "taichi_version": ".".join(map(str, ti.__version__)),
        "config": os.path.relpath(args.config),
        "particles": N, "springs": S, "actuators": A, "phases": P, "steps": T, "dt": dt,
        "batch": B, "threads": args.threads, "precision": args.precision,
        "kernel_launches_per_forward": 3 * T + 1,
        "first_call_s": compile_s,
        "loss": float(loss[None]) / B,
        "grad": grad,
        "forward": fwd,
        "forward_backward": fb,
    }
    if args.vars_out:
        vals = {}
        for a in range(A):
            for j in range(P):
                vals["theta.actuator[%d].weight[%d]" % (a, j)] = wv[a][j]
            vals["theta.actuator[%d].bias" % a] = bv[a]
        json.dump(vals, open(args.vars_out, "w"), indent=1)
    text = json.dumps(out, indent=1)
    if args.json:
        open(args.json, "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
