"""NVIDIA Warp's FEM soft-body scene (warp-lang 1.9.x,
warp/examples/optim/example_softbody_properties.py, "anisotropic" mode) on Warp's CPU device,
next to steer's configs/warp_softbody.json.

Written for steer's peer benchmark (bench/peers/run_peers.sh) from the settings and laws of the
installed warp-lang package (the example and warp/sim/{model,collide,integrator,
integrator_euler}.py were read, not copied). The scene: a 2 x 2 x 2 grid of 0.1 m cells
(ModelBuilder.add_soft_grid: 27 particles, 5 tetrahedra per cell = 40, and the 48 boundary
triangles of the tetrahedra) at origin (-0.5, 1.0, -0.1) m, every particle moving at
(5, -5, 0) m/s, 0.2/27 kg per particle, radius 0.0005 m; per-tet Lame parameters from E = 1.5e4 Pa,
nu = 0.3 (k_mu = 5769.2, k_lambda = 8653.8, k_damp = 0) in warp.sim's neo-Hookean with rest
stability (eval_tetrahedra); surface triangles with tri_ke = tri_ka = tri_kd = 1e-4 and no drag or
lift (eval_triangles; its damping, the body's only one with k_damp = 0, moves the loss by ~1e-3);
gravity 9.80665 m/s^2; the ground plane y = 0 and a static box (centre (2, 1, 0), half extents
0.25, 1, 1) with penalty contact ke = 1e3 N/m, kd = 1 N s/m, kf = 0, mu = 0.2 (both the model's
soft_contact_* and the box's material, averaged for the box); SemiImplicitIntegrator, 60 frames of
16 substeps = 960 steps of 1/960 s, wp.sim.collide before every step (margin 0.001 m: the box's
contacts are found anew from the current positions each step); loss |mean particle position -
(-1, 1.5, 0)|^2; the variables are the 80 numbers tet_materials[:, 0:2] (k_mu, k_lambda of every
tet).

warp.sim's tape gradient of this scene is not the derivative of its own loss, for two reasons in
the 1.9 sources (its own float32 finite differences agree with the exact float64 gradient below,
not with its tape): (a) wp.sim.collide duplicates the contact point and normal arrays for the tape
every step but not soft_contact_count / _particle / _tids, so the backward pass of every step's box
contact reads the last step's contact count, 0 here (the body has left the wall), and the box
contact contributes nothing to the gradient; (b) the ground kernel updates the force in place
(f[i] = f[i] - ...), and Warp's adjoint of that read-modify-write doubles the adjoint of the force
array, so while a particle touches the ground the elastic forces' terms enter the gradient twice.
The float64 program can reproduce both (shipped_backward: the box force kept off the tape; while on
the ground the force becomes 2 f - f_off_tape, the same value with twice the adjoint), which is how
the float32 gradient is checked.

Subcommands:

  check   loss and dL/d(k_mu, k_lambda per tet) three ways: warp.sim as shipped (float32,
          wp.Tape through a params array assigned into tet_materials), a float64 Warp program
          of the same laws written here (wp.vec3d kernels, wp.Tape: eval_tetrahedra's
          neo-Hookean incl. its damping terms, eval_triangles' membrane (--no-triangles drops
          it), the ground contact, the box's SDF contact recomputed from the current state
          every step, integrate_particles incl. its velocity clamp; topology from the warp.sim
          model, rest positions and rest matrices recomputed in float64), and steer
          (bench_peer on configs/warp_softbody.json, float64; its elements are mapped to warp's
          tets by cell and vertex set, asserting a one-to-one match). Also: the float64 program
          with the other triangle setting (their effect), its emulation of warp.sim's tape
          (above), its own centred finite differences on 4 components (step 1e-6 relative),
          warp.sim's float32 finite differences on --fd32 components (step 1e-3 relative), the
          final centre of mass of each side and where the float64 run touched ground and box.
          At the default point every tet has the example's parameters; --perturb SEED scales
          each tet's k_mu and k_lambda by factors in [0.7, 1.3] (numpy default_rng(SEED)),
          passed to steer with --vars-json. steer models the triangles (the config's
          model.surface_membrane), so it is compared with the float64 program with them
          (--steer-no-triangles: without, for a config without the membrane). Exits 1 when steer and that float64 program differ by
          more than --tol (1e-6) relative in the loss or the gradient (max |a - b| / max |b|),
          or warp.sim and the float64 program differ by more than --tol32 in the loss or
          between warp.sim's tape and the emulated one (1e-3: float32 rounding carried through
          960 steps and two impacts; measured 8e-6..9e-6 in the loss and 4e-5..1.6e-4 in the
          gradient at the example's point and seeds 1-3, so 6x headroom, while dropping the
          triangles moves the loss by 1.2e-3..1.7e-3 and the exact gradient is 0.6..0.8 away).
          When bench_peer or the config is missing or fails, "steer_float64" holds the error
          and the check exits 1 after printing everything else.

  time    B copies of the soft body in one warp.sim model (--batch B): each its own
          add_soft_grid at the same start, with the same box and ground; loss = sum over
          copies of |CoM_b - target|^2. The copies overlap in space but do not interact:
          warp.sim's particle-particle kernel runs only on a hash grid that is never built
          here (as in the example), and the script checks that every copy's final CoM and
          gradient equal copy 0's. Reports model build, the first call (kernel compilation or
          cache load; --fresh-cache: a new empty kernel cache, so the full JIT compile) apart,
          then wall and CPU time of one forward and one forward+backward (tape record,
          tape.backward, tape.zero) repeated for --min-time seconds; per call and per rollout
          (divided by B). --soft-contact-max (default 27 B: one slot per particle, the most the
          one box can produce, the least work; the example's default is 65536) sets the
          particle-shape contact slots, each a thread of the contact kernel every step.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from warp_bounce import import_warp, per_rollout, rel, timed, vec_rel  # noqa: E402

CELLS, CELL = 2, 0.1
NV = (CELLS + 1) ** 3  # 27 particles per body
NT = 5 * CELLS**3  # 40 tets per body
ORIGIN = (-0.5, 1.0, -0.5 * CELLS * CELL)
V0, TARGET = (5.0, -5.0, 0.0), (-1.0, 1.5, 0.0)
TOTAL_MASS = 0.2
RADIUS = 0.0005
YOUNG, POISSON = 1.5e4, 0.3
K_MU = 0.5 * YOUNG / (1.0 + POISSON)
K_LAMBDA = YOUNG * POISSON / ((1.0 + POISSON) * (1.0 - 2.0 * POISSON))
TRI_K = 1.0e-4  # tri_ke = tri_ka = tri_kd; drag = lift = 0
KE, KF, KD, MU = 1.0e3, 0.0, 1.0, 0.2  # box material and the model's soft_contact_*
MARGIN = 0.001
BOX_POS, BOX_HALF = (2.0, 1.0, 0.0), (0.25, 1.0, 1.0)
FPS, SUBSTEPS = 60, 16
STEPS = FPS * SUBSTEPS
DT = 1.0 / FPS / SUBSTEPS
GRAVITY = 9.80665
V_MAX = 1.0e5  # warp.sim's particle_max_velocity


class SimScene:
    """The example's scene in warp.sim (float32, CPU) with B copies of the soft body; the
    variables are a params array of 2 numbers per tet assigned into tet_materials."""

    def __init__(self, wp, batch, soft_contact_max):
        import numpy as np

        self.wp, self.B = wp, batch
        builder = wp.sim.ModelBuilder()
        builder.default_particle_radius = RADIUS
        builder.soft_contact_max = soft_contact_max
        density = TOTAL_MASS / NV / CELL**3  # the example's per-particle "density"
        for _ in range(batch):
            builder.add_soft_grid(pos=wp.vec3(*ORIGIN), rot=wp.quat_identity(), vel=wp.vec3(*V0),
                                  dim_x=CELLS, dim_y=CELLS, dim_z=CELLS, cell_x=CELL, cell_y=CELL, cell_z=CELL,
                                  density=density, k_mu=K_MU, k_lambda=K_LAMBDA, k_damp=0.0,
                                  tri_ke=TRI_K, tri_ka=TRI_K, tri_kd=TRI_K, tri_drag=0.0, tri_lift=0.0)
        builder.add_shape_box(body=-1, pos=wp.vec3(*BOX_POS), hx=BOX_HALF[0], hy=BOX_HALF[1], hz=BOX_HALF[2],
                              ke=KE, kf=KF, kd=KD, mu=MU)
        model = builder.finalize(device="cpu", requires_grad=True)
        model.ground = True
        for key, val in (("ke", KE), ("kf", KF), ("kd", KD), ("mu", MU), ("margin", MARGIN), ("restitution", 1.0)):
            setattr(model, "soft_contact_" + key, val)
        self.model = model
        self.integrator = wp.sim.SemiImplicitIntegrator()
        self.states = [model.state() for _ in range(STEPS + 1)]
        self.base_params = model.tet_materials.numpy()[:, :2].astype(np.float64)
        self.params = wp.array(self.base_params.flatten(), dtype=wp.float32, device="cpu", requires_grad=True)
        self.com = wp.zeros(batch, dtype=wp.vec3, device="cpu", requires_grad=True)
        self.loss = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
        self.max_contacts, self.normals = 0, set()

        @wp.kernel
        def assign_materials(params: wp.array(dtype=float), materials: wp.array2d(dtype=float)):
            t = wp.tid()
            materials[t, 0] = params[2 * t]
            materials[t, 1] = params[2 * t + 1]

        @wp.kernel
        def body_com(q: wp.array(dtype=wp.vec3), per_body: int, com: wp.array(dtype=wp.vec3)):
            p = wp.tid()
            wp.atomic_add(com, p // per_body, q[p] / float(per_body))

        @wp.kernel
        def com_loss(com: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
            d = com[wp.tid()] - target
            wp.atomic_add(loss, 0, wp.dot(d, d))

        self.k_assign, self.k_com, self.k_loss = assign_materials, body_com, com_loss

    def set_params(self, p):
        """p: (tets, 2) k_mu, k_lambda (None: the example's values)"""
        import numpy as np

        self.params.assign(np.asarray(self.base_params if p is None else p, dtype=np.float32).reshape(-1))

    def forward(self, track_contacts=False):
        wp, model = self.wp, self.model
        self.loss.zero_()
        self.com.zero_()
        wp.launch(self.k_assign, dim=model.tet_count, inputs=[self.params], outputs=[model.tet_materials], device="cpu")
        for i in range(STEPS):
            wp.sim.collide(model, self.states[i])
            if track_contacts:
                n = int(model.soft_contact_count.numpy()[0])
                self.max_contacts = max(self.max_contacts, n)
                self.normals.update(tuple(float(c) for c in nrm) for nrm in model.soft_contact_normal.numpy()[:n])
            self.states[i].clear_forces()
            self.integrator.simulate(model, self.states[i], self.states[i + 1], DT)
        wp.launch(self.k_com, dim=model.particle_count, inputs=[self.states[-1].particle_q, NV], outputs=[self.com],
                  device="cpu")
        wp.launch(self.k_loss, dim=self.B, inputs=[self.com, wp.vec3(*TARGET)], outputs=[self.loss], device="cpu")

    def fwd(self):
        """one forward rollout, finished"""
        self.forward()
        self.wp.synchronize_device("cpu")

    def fwd_bwd(self, keep=False):
        """forward on a tape, backward from the loss, zeroed gradients; keep: store the results"""
        tape = self.wp.Tape()
        with tape:
            self.forward(track_contacts=keep)
        tape.backward(self.loss)
        if keep:
            self.grad = self.params.grad.numpy().reshape(self.B, NT, 2).astype(float)
            self.loss_value = float(self.loss.numpy()[0])
            self.com_T = self.com.numpy().astype(float)
            self.x_T = self.states[-1].particle_q.numpy().astype(float)
        tape.zero()
        self.wp.synchronize_device("cpu")

    def geometry(self):
        """topology of body 0 (tet and triangle indices) from the warp.sim model"""
        m = self.model
        tets = m.tet_indices.numpy()[:NT].tolist()
        tris = [t for t in m.tri_indices.numpy().tolist() if max(t) < NV]
        return tets, tris


class Float64Scene:
    """warp.sim's laws as float64 Warp kernels (one body): eval_tetrahedra, eval_triangles,
    eval_particle_ground_contacts, the box contact of create_soft_contacts (box SDF, closest
    point and normal in the box frame, recomputed each step) + eval_particle_contacts, and
    integrate_particles. Forces are summed per step into their own array, then integrated.
    shipped_backward=True: the same forward pass, but the tape reproduces warp.sim's (see the
    module's docstring): the box force is computed off the tape, and while a particle is on the
    ground its elastic force f enters as 2 f - f_off_tape (f_off_tape: a copy made off the
    tape), the same value with twice the adjoint."""

    def __init__(self, wp, tets, tris, triangles=True, shipped_backward=False):
        import numpy as np

        self.wp, self.shipped = wp, shipped_backward
        f64 = wp.float64
        self.triangles = triangles and len(tris) > 0
        # float64 rest positions: vertex (i, j, k) -> i + 3 (j + 3 k), as add_soft_grid numbers them
        n = CELLS + 1
        x0 = np.array([[ORIGIN[0] + i * CELL, ORIGIN[1] + j * CELL, ORIGIN[2] + k * CELL]
                       for k in range(n) for j in range(n) for i in range(n)], dtype=np.float64)
        self.x0 = x0
        tet_pose = []
        for a, b, c, d in tets:
            Dm = np.stack([x0[b] - x0[a], x0[c] - x0[a], x0[d] - x0[a]], axis=1)
            assert np.linalg.det(Dm) > 0.0
            tet_pose.append(np.linalg.inv(Dm))
        tri_pose = []
        for a, b, c in tris:  # add_triangle's 2D rest basis: e1 along qp, e2 = n x e1 in the plane
            qp, rp = x0[b] - x0[a], x0[c] - x0[a]
            nrm = np.cross(qp, rp)
            nrm /= np.linalg.norm(nrm)
            e1 = qp / np.linalg.norm(qp)
            e2 = np.cross(nrm, e1)
            e2 /= np.linalg.norm(e2)
            D = np.array([e1, e2]) @ np.array([qp, rp]).T
            assert np.linalg.det(D) > 0.0
            tri_pose.append(np.linalg.inv(D))
        dev = "cpu"
        self.tet_idx = wp.array(np.array(tets, dtype=np.int32), dtype=int, device=dev)
        self.tet_pose = wp.array(np.array(tet_pose), dtype=wp.mat33d, device=dev)
        self.tri_idx = wp.array(np.array(tris, dtype=np.int32).reshape(-1, 3), dtype=int, device=dev)
        self.tri_pose = wp.array(np.array(tri_pose).reshape(-1, 2, 2), dtype=wp.mat22d, device=dev)
        self.tri_mat = wp.array(np.tile([TRI_K, TRI_K, TRI_K, 0.0, 0.0], (len(tris), 1)), dtype=f64, device=dev)
        self.n_tet, self.n_tri = len(tets), len(tris)
        self.inv_mass = wp.array(np.full(NV, NV / TOTAL_MASS), dtype=f64, device=dev)
        self.mat = wp.zeros((len(tets), 3), dtype=f64, device=dev, requires_grad=True)

        @wp.kernel
        def tets64(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), idx: wp.array2d(dtype=int),
                   pose: wp.array(dtype=wp.mat33d), mat: wp.array2d(dtype=f64), f: wp.array(dtype=wp.vec3d)):
            t = wp.tid()
            i, j, k, l = idx[t, 0], idx[t, 1], idx[t, 2], idx[t, 3]
            mu, lam, damp = mat[t, 0], mat[t, 1], mat[t, 2]
            act = f64(0.0)  # tet activation (0 in the example)
            e1, e2, e3 = x[j] - x[i], x[k] - x[i], x[l] - x[i]
            Dm = pose[t]
            inv_vol = wp.determinant(Dm) * f64(6.0)
            vol = f64(1.0) / inv_vol
            alpha = f64(1.0) + mu / lam - mu / (f64(4.0) * lam)
            mu_v, lam_v, damp_v = mu * vol, lam * vol, damp * vol
            F = wp.matrix_from_cols(e1, e2, e3) * Dm
            dFdt = wp.matrix_from_cols(v[j] - v[i], v[k] - v[i], v[l] - v[i]) * Dm
            Ic = f64(0.0)
            for r in range(3):
                for c in range(3):
                    Ic = Ic + F[r, c] * F[r, c]
            P = F * (mu_v * (f64(1.0) - f64(1.0) / (Ic + f64(1.0)))) + dFdt * damp_v
            H = P * wp.transpose(Dm)
            s = inv_vol / f64(6.0)
            g1 = wp.cross(e2, e3) * s
            g2 = wp.cross(e3, e1) * s
            g3 = wp.cross(e1, e2) * s
            # volume term (J - alpha + act) lambda; the damping as written: dJ/dx . v with absolute v
            ft = (wp.determinant(F) - alpha + act) * lam_v
            ft = ft + (wp.dot(g1, v[j]) + wp.dot(g2, v[k]) + wp.dot(g3, v[l])) * damp_v
            f1 = wp.vec3d(H[0, 0], H[1, 0], H[2, 0]) + g1 * ft
            f2 = wp.vec3d(H[0, 1], H[1, 1], H[2, 1]) + g2 * ft
            f3 = wp.vec3d(H[0, 2], H[1, 2], H[2, 2]) + g3 * ft
            wp.atomic_add(f, i, f1 + f2 + f3)
            wp.atomic_sub(f, j, f1)
            wp.atomic_sub(f, k, f2)
            wp.atomic_sub(f, l, f3)

        @wp.kernel
        def tris64(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), idx: wp.array2d(dtype=int),
                   pose: wp.array(dtype=wp.mat22d), mat: wp.array2d(dtype=f64), f: wp.array(dtype=wp.vec3d)):
            t = wp.tid()
            i, j, k = idx[t, 0], idx[t, 1], idx[t, 2]
            ke, ka, kd, k_drag, k_lift = mat[t, 0], mat[t, 1], mat[t, 2], mat[t, 3], mat[t, 4]
            e1, e2 = x[j] - x[i], x[k] - x[i]
            u1, u2 = v[j] - v[i], v[k] - v[i]
            Dm = pose[t]
            inv_area = wp.determinant(Dm) * f64(2.0)
            area0 = f64(1.0) / inv_area
            alpha = f64(1.0) + ke / ka
            ke_a, ka_a, kd_a = ke * area0, ka * area0, kd * area0
            F1 = e1 * Dm[0, 0] + e2 * Dm[1, 0]
            F2 = e1 * Dm[0, 1] + e2 * Dm[1, 1]
            P1 = F1 * ke_a + (u1 * Dm[0, 0] + u2 * Dm[1, 0]) * kd_a
            P2 = F2 * ke_a + (u1 * Dm[0, 1] + u2 * Dm[1, 1]) * kd_a
            fa = P1 * Dm[0, 0] + P2 * Dm[0, 1]
            fb = P1 * Dm[1, 0] + P2 * Dm[1, 1]
            nn = wp.cross(e1, e2)
            area = wp.length(nn) * f64(0.5)
            nn = wp.normalize(nn)
            c = area * inv_area - alpha  # + activation (0)
            dcdq = wp.cross(e2, nn) * inv_area * f64(0.5)
            dcdr = wp.cross(nn, e1) * inv_area * f64(0.5)
            fc = ka_a * c + kd_a * (wp.dot(dcdq, v[j]) + wp.dot(dcdr, v[k]) - wp.dot(dcdq + dcdr, v[i]))
            fa = fa + dcdq * fc
            fb = fb + dcdr * fc
            f0 = fa + fb
            if k_drag != f64(0.0) or k_lift != f64(0.0):  # 0 in the example; kept for completeness
                vmid = (v[i] + v[j] + v[k]) * f64(0.3333)
                f_drag = vmid * (k_drag * area * wp.abs(wp.dot(nn, vmid)))
                lift = k_lift * area * (f64(wp.HALF_PI) - wp.acos(wp.dot(nn, wp.normalize(vmid))))
                f_lift = nn * lift * wp.dot(vmid, vmid)
                f0 = f0 - f_drag - f_lift
                fa = fa + f_drag + f_lift
                fb = fb + f_drag + f_lift
            wp.atomic_add(f, i, f0)
            wp.atomic_sub(f, j, fa)
            wp.atomic_sub(f, k, fb)

        @wp.func
        def box_sdf64(h: wp.vec3d, p: wp.vec3d):
            q = wp.vec3d(wp.abs(p[0]) - h[0], wp.abs(p[1]) - h[1], wp.abs(p[2]) - h[2])
            e = wp.vec3d(wp.max(q[0], f64(0.0)), wp.max(q[1], f64(0.0)), wp.max(q[2], f64(0.0)))
            return wp.length(e) + wp.min(wp.max(q[0], wp.max(q[1], q[2])), f64(0.0))

        @wp.func
        def box_normal64(h: wp.vec3d, p: wp.vec3d):
            qx, qy, qz = wp.abs(p[0]) - h[0], wp.abs(p[1]) - h[1], wp.abs(p[2]) - h[2]
            zero = f64(0.0)
            n = wp.vec3d(zero, zero, wp.sign(p[2]))  # interior, z face
            if qx > zero or qy > zero or qz > zero:  # outside: towards the closest surface point
                n = wp.normalize(p - wp.vec3d(wp.clamp(p[0], -h[0], h[0]), wp.clamp(p[1], -h[1], h[1]),
                                              wp.clamp(p[2], -h[2], h[2])))
            elif (qx > qy and qx > qz) or (qy == zero and qz == zero):
                n = wp.vec3d(wp.sign(p[0]), zero, zero)
            elif (qy > qx and qy > qz) or (qx == zero and qz == zero):
                n = wp.vec3d(zero, wp.sign(p[1]), zero)
            return n

        @wp.kernel
        def box64(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), radius: f64, box_p: wp.vec3d,
                  box_h: wp.vec3d, ke: f64, kd: f64, kf: f64, mu: f64, margin: f64, adhesion: f64,
                  fb: wp.array(dtype=wp.vec3d), box_n: wp.array(dtype=wp.vec3d)):
            # create_soft_contacts (box SDF, closest point and normal in the box frame: the world
            # translated) on the current positions, then eval_particle_contacts on that contact
            p = wp.tid()
            xp = x[p]
            xl = xp - box_p
            dist = box_sdf64(box_h, xl)
            if dist < margin + radius:
                nb = box_normal64(box_h, xl)
                bx = box_p + (xl - nb * dist)
                c = wp.dot(nb, xp - bx) - radius
                if c <= adhesion:
                    vn = wp.dot(nb, v[p])
                    vt = v[p] - nb * vn
                    ft = wp.normalize(vt) * wp.min(kf * wp.length(vt), wp.abs(mu * c * ke))
                    fb[p] = -(nb * c * ke + (nb * wp.min(vn, f64(0.0)) * kd + ft))
                    box_n[p] = nb

        @wp.kernel
        def particles64(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), f: wp.array(dtype=wp.vec3d),
                        f_off_tape: wp.array(dtype=wp.vec3d), shipped: int, fb: wp.array(dtype=wp.vec3d),
                        inv_mass: wp.array(dtype=f64), radius: f64,
                        ke: f64, kd: f64, kf: f64, mu: f64, gravity: wp.vec3d, dt: f64, v_max: f64,
                        x_out: wp.array(dtype=wp.vec3d), v_out: wp.array(dtype=wp.vec3d)):
            p = wp.tid()
            xp = x[p]
            vp = v[p]
            zero = f64(0.0)
            fp = f[p]
            # ground y = 0, n = +y (eval_particle_ground_contacts)
            ng = wp.vec3d(zero, f64(1.0), zero)
            cg = wp.min(wp.dot(ng, xp) - radius, zero)
            if cg < zero:
                if shipped != 0:  # same value, twice the adjoint of the elastic forces (see Float64Scene)
                    fp = fp * f64(2.0) - f_off_tape[p]
                vn = wp.dot(ng, vp)
                fn = cg * ke + wp.min(vn, zero) * kd
                vt = vp - ng * vn
                vs = wp.length(vt)
                if vs > zero:
                    vt = vt / vs
                fp = fp - ng * fn - vt * wp.min(vs * kf, mu * wp.abs(fn))
            fp = fp + fb[p]
            # integrate_particles
            v1 = vp + (fp * inv_mass[p] + gravity) * dt
            speed = wp.length(v1)
            if speed > v_max:
                v1 = v1 * (v_max / speed)
            x_out[p] = xp + v1 * dt
            v_out[p] = v1

        @wp.kernel
        def copy64(src: wp.array(dtype=wp.vec3d), dst: wp.array(dtype=wp.vec3d)):
            p = wp.tid()
            dst[p] = src[p]

        @wp.kernel
        def com64(q: wp.array(dtype=wp.vec3d), com: wp.array(dtype=wp.vec3d)):
            p = wp.tid()
            wp.atomic_add(com, 0, q[p] / f64(NV))

        @wp.kernel
        def loss64(com: wp.array(dtype=wp.vec3d), target: wp.vec3d, loss: wp.array(dtype=f64)):
            e = com[0] - target
            loss[0] = wp.dot(e, e)

        self.k_tets, self.k_tris, self.k_box, self.k_particles = tets64, tris64, box64, particles64
        self.k_com, self.k_loss, self.k_copy = com64, loss64, copy64
        self.xs = [wp.zeros(NV, dtype=wp.vec3d, device=dev, requires_grad=True) for _ in range(STEPS + 1)]
        self.vs = [wp.zeros(NV, dtype=wp.vec3d, device=dev, requires_grad=True) for _ in range(STEPS + 1)]
        self.fs = [wp.zeros(NV, dtype=wp.vec3d, device=dev, requires_grad=True) for _ in range(STEPS)]
        self.fbs = [wp.zeros(NV, dtype=wp.vec3d, device=dev, requires_grad=True) for _ in range(STEPS)]
        self.hits = [wp.zeros(NV, dtype=wp.vec3d, device=dev) for _ in range(STEPS)]
        self.f_off = [wp.zeros(NV, dtype=wp.vec3d, device=dev) for _ in range(STEPS if shipped_backward else 1)]
        self.com = wp.zeros(1, dtype=wp.vec3d, device=dev, requires_grad=True)
        self.loss = wp.zeros(1, dtype=f64, device=dev, requires_grad=True)

    def forward(self, params):
        """params: (tets, 2) k_mu, k_lambda; returns the loss"""
        import numpy as np

        wp, f64, dev = self.wp, self.wp.float64, "cpu"
        mat = np.zeros((self.n_tet, 3))
        mat[:, :2] = np.asarray(params, dtype=np.float64).reshape(self.n_tet, 2)
        self.mat.assign(mat)
        self.xs[0].assign(self.x0)
        self.vs[0].assign(np.tile(np.array(V0, dtype=np.float64), (NV, 1)))
        self.com.zero_()
        self.loss.zero_()
        box = [f64(RADIUS), wp.vec3d(*BOX_POS), wp.vec3d(*BOX_HALF), f64(0.5 * (KE + KE)), f64(0.5 * (KD + KD)),
               f64(0.5 * (KF + KF)), f64(0.5 * (MU + MU)), f64(MARGIN), f64(0.0)]  # shape and model averaged
        rest = [self.inv_mass, f64(RADIUS), f64(KE), f64(KD), f64(KF), f64(MU), wp.vec3d(0.0, -GRAVITY, 0.0),
                f64(DT), f64(V_MAX)]
        for i in range(STEPS):
            f, fb = self.fs[i], self.fbs[i]
            f.zero_()
            fb.zero_()
            self.hits[i].zero_()
            if self.triangles:
                wp.launch(self.k_tris, dim=self.n_tri, inputs=[self.xs[i], self.vs[i], self.tri_idx, self.tri_pose,
                                                               self.tri_mat], outputs=[f], device=dev)
            wp.launch(self.k_tets, dim=self.n_tet,
                      inputs=[self.xs[i], self.vs[i], self.tet_idx, self.tet_pose, self.mat], outputs=[f], device=dev)
            # shipped backward: the box force enters the forward pass but not the tape
            wp.launch(self.k_box, dim=NV, inputs=[self.xs[i], self.vs[i]] + box, outputs=[fb, self.hits[i]],
                      device=dev, record_tape=not self.shipped)
            if self.shipped:
                wp.launch(self.k_copy, dim=NV, inputs=[f], outputs=[self.f_off[i]], device=dev, record_tape=False)
            f_off = self.f_off[i if self.shipped else 0]
            wp.launch(self.k_particles, dim=NV, inputs=[self.xs[i], self.vs[i], f, f_off, int(self.shipped), fb] + rest,
                      outputs=[self.xs[i + 1], self.vs[i + 1]], device=dev)
        wp.launch(self.k_com, dim=NV, inputs=[self.xs[-1]], outputs=[self.com], device=dev)
        wp.launch(self.k_loss, dim=1, inputs=[self.com, wp.vec3d(*TARGET)], outputs=[self.loss], device=dev)
        return float(self.loss.numpy()[0])

    def grad(self, params):
        wp = self.wp
        tape = wp.Tape()
        with tape:
            val = self.forward(params)
        tape.backward(self.loss)
        g = self.mat.grad.numpy()[:, :2].copy()
        tape.zero()
        return val, g

    def contact_summary(self):
        """which particles touched the ground / the box and with which box normals, over the rollout"""
        import numpy as np

        hits = np.array([h.numpy() for h in self.hits])  # (steps, NV, 3)
        xs = np.array([x.numpy() for x in self.xs])
        on_box = np.any(hits != 0.0, axis=2)
        on_ground = xs[:-1, :, 1] < RADIUS
        normals = sorted({tuple(float(c) for c in n) for n in hits[on_box]})
        q = np.abs(xs - np.array(BOX_POS)) - np.array(BOX_HALF)  # gap: the box SDF minus the radius
        gap_box = np.linalg.norm(np.maximum(q, 0.0), axis=2) + np.minimum(q.max(axis=2), 0.0) - RADIUS
        steps_box = np.nonzero(on_box.any(axis=1))[0]
        steps_ground = np.nonzero(on_ground.any(axis=1))[0]
        return {
            "box_normals": normals[:8], "box_normal_count": len(normals),
            "box_steps": [int(steps_box[0]), int(steps_box[-1])] if len(steps_box) else None,
            "box_particle_steps": int(on_box.sum()),
            "box_particles": sorted(int(p) for p in np.nonzero(on_box.any(axis=0))[0]),
            "ground_steps": [int(steps_ground[0]), int(steps_ground[-1])] if len(steps_ground) else None,
            "ground_particle_steps": int(on_ground.sum()),
            "ground_and_box_same_particle_steps": int((on_box & on_ground).sum()),
            "max_penetration_box": float(-min(0.0, np.min(gap_box))),
            "max_penetration_ground": float(-min(0.0, np.min(xs[:, :, 1]) - RADIUS)),
            "min_y": float(xs[:, :, 1].min()), "max_y": float(xs[:, :, 1].max()), "max_x": float(xs[:, :, 0].max()),
        }


def steer_tets():
    """steer's 5-tet split of each grid cell (configs/warp_softbody.json's "cut_phase": 1): cell
    (i, j, k), corner b = (i + (b & 1), j + (b >> 1 & 1), k + (b >> 2 & 1)), cells z outer, x inner"""
    n = CELLS + 1
    odd = [(0, 1, 2, 4), (3, 1, 2, 7), (5, 1, 4, 7), (6, 2, 4, 7), (1, 2, 4, 7)]
    even = [(1, 0, 3, 5), (2, 0, 3, 6), (4, 0, 5, 6), (7, 3, 5, 6), (0, 3, 5, 6)]
    out = []
    for k in range(CELLS):
        for j in range(CELLS):
            for i in range(CELLS):
                v = [(i + (b & 1)) + n * ((j + (b >> 1 & 1)) + n * (k + (b >> 2 & 1))) for b in range(8)]
                for tet in (odd if (i + j + k) % 2 else even):
                    out.append([v[b] for b in tet])
    return out


def steer_to_warp(tets):
    """steer element e -> warp tet t: same cell and the same vertex set, one-to-one"""
    m = []
    for e, st in enumerate(steer_tets()):
        hits = [t for t, wt in enumerate(tets) if t // 5 == e // 5 and sorted(wt) == sorted(st)]
        if len(hits) != 1:
            raise AssertionError(f"steer element {e} {st} matches warp tets {hits}: the splits differ")
        m.append(hits[0])
    if sorted(m) != list(range(len(tets))):
        raise AssertionError("steer's elements do not cover warp's tets one to one")
    return m


def bench_peer(cmd):
    """bench_peer's JSON, or an error message"""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()[-2000:]}"
    try:
        return json.loads(r.stdout), None
    except ValueError:
        return None, f"{' '.join(cmd)} printed no JSON: {r.stdout[-500:]!r}"


def steer_variables(names, n_tets):
    """steer's variable i -> (element, 0 for mu / 1 for lambda); names like [theta.]element[12].mu"""
    out = []
    for name in names:
        mt = re.fullmatch(r"(?:.*\.)?element\[(\d+)\]\.(mu|lambda)", name)
        if not mt:
            raise ValueError(f"steer variable {name} is not an element's mu or lambda")
        out.append((int(mt.group(1)), 0 if mt.group(2) == "mu" else 1))
    if sorted(out) != [(e, a) for e in range(n_tets) for a in (0, 1)]:
        raise ValueError(f"steer's variables are not the 2 x {n_tets} element mu/lambda: {names[:6]}...")
    return out


def run_steer(args, params, tets):
    """bench_peer's loss and gradient, the gradient in warp's tet order (tets, 2); with params
    (tets, 2), those values passed by --vars-json under steer's own variable names"""
    import numpy as np

    for path, what in ((args.steer_peer, "bench_peer"), (args.config, "config")):
        if not os.path.exists(path):
            return {"error": f"steer's {what} {path} does not exist (not built / not written yet)"}
    e2t = steer_to_warp(tets)
    cmd = [args.steer_peer, args.config, "--no-timing"]
    st, err = bench_peer(cmd)
    if err:
        return {"error": err}
    try:
        svars = steer_variables(st["var_names"], len(tets))
    except ValueError as ex:
        return {"error": str(ex)}
    if params is not None:  # a second run at the given point
        vals = {name: float(params[e2t[e], a]) for name, (e, a) in zip(st["var_names"], svars)}
        fd, tmp = tempfile.mkstemp(prefix="warp_softbody_vars_", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(vals, f)
        try:
            st, err = bench_peer(cmd + ["--vars-json", tmp])
        finally:
            os.unlink(tmp)
        if err:
            return {"error": err}
        svars = steer_variables(st["var_names"], len(tets))
        sent = np.array([vals[n] for n in st["var_names"]])
        if "vars" in st and not np.array_equal(np.array(st["vars"], dtype=float), sent):
            return {"error": "bench_peer reports other variable values than the ones passed"}
    g = np.full((len(tets), 2), np.nan)
    for (e, a), val in zip(svars, st["grad"]):
        g[e2t[e], a] = val
    extra = {k: v for k, v in st.items() if k not in ("loss", "grad", "var_names") and not isinstance(v, (list, dict))}
    return {"loss": float(st["loss"]), "grad": g, "info": extra}


def compact_json(obj):
    """indent=1 JSON with every list of numbers on one line"""
    text = json.dumps(obj, indent=1)
    return re.sub(r"\[\s+([^\[\]{}\"]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)


def cmd_check(args):
    import numpy as np

    wp = import_warp()
    sim = SimScene(wp, 1, args.soft_contact_max)
    if args.perturb is None:  # the example's Lame values in double (warp.sim rounds them to float32)
        p64 = np.tile([K_MU, K_LAMBDA], (NT, 1))
    else:
        p64 = sim.base_params * np.random.default_rng(args.perturb).uniform(0.7, 1.3, size=sim.base_params.shape)
    sim.set_params(p64)
    sim.fwd_bwd(keep=True)
    tets, tris = sim.geometry()
    sim_grad = sim.grad[0]
    tri = not args.no_triangles

    f64 = Float64Scene(wp, tets, tris, triangles=tri)
    loss64, g64 = f64.grad(p64)
    com64 = f64.com.numpy()[0].tolist()
    contacts = f64.contact_summary()
    f64o = Float64Scene(wp, tets, tris, triangles=not tri)
    loss64o, g64o = f64o.grad(p64)
    (loss_t, g_t), (loss_n, g_n) = ((loss64, g64), (loss64o, g64o)) if tri else ((loss64o, g64o), (loss64, g64))
    ship = Float64Scene(wp, tets, tris, triangles=tri, shipped_backward=True)
    loss_s, g_s = ship.grad(p64)
    del ship, f64o

    def fd_check(loss_at, grad, comps, eps, ref="tape"):
        out = []
        for c in comps:
            t, a = divmod(c, 2)
            h = eps * p64[t, a]
            pp, pm = p64.copy(), p64.copy()
            pp[t, a] += h
            pm[t, a] -= h
            val = (loss_at(pp) - loss_at(pm)) / (2.0 * h)
            out.append({"tet": t, "param": "k_mu" if a == 0 else "k_lambda", "fd": val, ref: float(grad[t, a]),
                        "rel": rel(val, float(grad[t, a]))})
        return out

    big = int(np.argmax(np.abs(g64).reshape(-1)))
    comps = [big] + [c for c in (1, 2 * 17, 2 * 26 + 1, 2 * 39) if c != big][:3]
    fd64 = fd_check(f64.forward, g64, comps, args.fd_eps)

    def sim_loss(p):
        sim.set_params(p)
        sim.forward()
        return float(sim.loss.numpy()[0])

    fd32 = fd_check(sim_loss, g64, comps[:args.fd32], 1e-3, "float64")  # warp.sim's own derivative vs the exact one
    for r, c in zip(fd32, comps):
        r["warp_sim_tape"] = float(sim_grad.reshape(-1)[c])

    st = run_steer(args, p64 if args.perturb is not None else None, tets)
    flat = lambda g: np.asarray(g).reshape(-1).tolist()  # noqa: E731
    out = {
        "warp_version": wp.config.version,
        "point": "example" if args.perturb is None else f"perturbed (seed {args.perturb})",
        "params_k_mu_k_lambda": p64.tolist() if args.perturb is not None else [K_MU, K_LAMBDA],
        "tets": tets,
        "triangles": len(tris),
        "contacts_float64": contacts,
        "warp_sim_float32": {"loss": sim.loss_value, "grad": sim_grad.tolist(), "com_T": sim.com_T[0].tolist(),
                             "max_box_contacts": sim.max_contacts, "box_normals": sorted(sim.normals)[:8],
                             "soft_contact_max": args.soft_contact_max,
                             "fd_1e-3_vs_float64": fd32},
        "warp_float64": {"triangles": tri, "loss": loss64, "grad": g64.tolist(), "com_T": com64,
                         "fd": fd64, "fd_eps_rel": args.fd_eps},
        "warp_float64_shipped_backward": {"triangles": tri, "loss": loss_s, "grad": g_s.tolist()},
        "warp_float64_other_triangles": {"triangles": not tri, "loss": loss64o, "grad": g64o.tolist()},
        "triangles_effect": {"loss_rel": rel(loss_t, loss_n), "grad_rel": vec_rel(flat(g_n), flat(g_t)),
                             "loss_with": loss_t, "loss_without": loss_n},
        "warp_float64_vs_warp_sim_float32": {
            "loss_rel": rel(loss64, sim.loss_value),
            "grad_rel": vec_rel(flat(sim_grad), flat(g_s)),
            "grad_rel_exact": vec_rel(flat(sim_grad), flat(g64)),
            "com_max_abs": float(np.max(np.abs(np.array(com64) - sim.com_T[0]))),
            "note": "grad_rel: warp.sim's tape vs the float64 program's emulation of that tape's two defects; "
                    "grad_rel_exact: vs the exact float64 gradient",
        },
        "tol": args.tol,
        "tol32": args.tol32,
    }
    b = out["warp_float64_vs_warp_sim_float32"]
    ok = b["loss_rel"] <= args.tol32 and b["grad_rel"] <= args.tol32
    if "error" in st:
        out["steer_float64"] = st
        ok = False
    else:
        # steer's config models the membrane (model.surface_membrane); --steer-no-triangles for
        # a config without it
        with_tri = not args.steer_no_triangles
        ref, other = ((loss_t, g_t), (loss_n, g_n)) if with_tri else ((loss_n, g_n), (loss_t, g_t))
        out["steer_float64"] = {"loss": st["loss"], "grad": st["grad"].tolist(), "info": st["info"]}
        out["steer_vs_warp_float64"] = {"triangles": with_tri, "loss_rel": rel(st["loss"], ref[0]),
                                        "grad_rel": vec_rel(flat(st["grad"]), flat(ref[1]))}
        out["steer_vs_warp_float64_" + ("without" if with_tri else "with") + "_triangles"] = {
            "loss_rel": rel(st["loss"], other[0]), "grad_rel": vec_rel(flat(st["grad"]), flat(other[1]))}
        out["steer_vs_warp_sim_float32"] = {"loss_rel": rel(st["loss"], sim.loss_value),
                                            "grad_rel": vec_rel(flat(sim_grad), flat(st["grad"]))}
        a = out["steer_vs_warp_float64"]
        ok = ok and a["loss_rel"] <= args.tol and a["grad_rel"] <= args.tol
    out["pass"] = ok
    print(compact_json(out))
    return 0 if ok else 1


def cmd_time(args):
    import shutil

    import numpy as np

    B = args.batch
    clock = {}

    def stamp(name, start):
        clock[name] = time.perf_counter() - start

    cache = tempfile.mkdtemp(prefix="warp_cache_") if args.fresh_cache else None
    start = time.perf_counter()
    wp = import_warp(cache)
    stamp("init_s", start)
    start = time.perf_counter()
    sim = SimScene(wp, B, args.soft_contact_max or NV * B)
    stamp("model_build_s", start)
    start = time.perf_counter()
    sim.fwd_bwd(keep=True)  # compiles (or loads from the kernel cache) every kernel
    stamp("first_call_s", start)
    g, com = sim.grad, sim.com_T
    out = dict({"peer": "warp", "warp_version": wp.config.version, "device": "cpu", "batch": B,
                "particles": sim.model.particle_count, "tets": sim.model.tet_count,
                "triangles": sim.model.tri_count, "soft_contact_max": sim.model.soft_contact_max,
                "max_box_contacts": sim.max_contacts, "fresh_cache": bool(args.fresh_cache)}, **clock)
    out.update({
        "loss_per_rollout": sim.loss_value / B, "com_T_body0": com[0].tolist(),
        "grad_body0_max_abs": float(np.max(np.abs(g[0]))),
        "bodies_identical": bool((g == g[0]).all() and (com == com[0]).all()),
        "grad_max_abs_dev_from_body0": float(np.max(np.abs(g - g[0]))),
        "com_max_abs_dev_from_body0": float(np.max(np.abs(com - com[0]))),
    })
    probe = wp.Tape()  # count the launches one forward records
    with probe:
        sim.forward()
    out["kernel_launches_per_forward"] = len(probe.launches)
    probe.zero()
    del probe
    for name, fn in (("forward", sim.fwd), ("forward_backward", sim.fwd_bwd)):
        out[name] = per_rollout(timed(fn, args.min_time, args.min_reps), B)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
    text = compact_json(out)
    if args.json:
        with open(args.json, "w") as fh:
            print(text, file=fh)
    print(text)
    return 0


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="cmd", required=True)
    c = commands.add_parser("check", help="loss and per-tet gradient: warp.sim float32, Warp float64, steer")
    c.add_argument("--steer-peer", default=os.path.join(root, "build", "bench", "bench_peer"))
    c.add_argument("--config", default=os.path.join(root, "configs", "warp_softbody.json"))
    c.add_argument("--perturb", type=int, default=None, metavar="SEED",
                   help="scale each tet's k_mu, k_lambda by factors in [0.7, 1.3] from default_rng(SEED)")
    c.add_argument("--no-triangles", action="store_true", help="float64 program without the surface triangles")
    c.add_argument("--soft-contact-max", type=int, default=64 * 1024, help="warp.sim's contact slots (the example's)")
    c.add_argument("--fd-eps", type=float, default=1e-6, help="relative step of the float64 finite differences")
    c.add_argument("--tol", type=float, default=1e-6)
    c.add_argument("--steer-no-triangles", action="store_true",
                   help="compare steer with the float64 program without triangles (a config without "
                        "model.surface_membrane; default: with them, as configs/warp_softbody.json)")
    c.add_argument("--fd32", type=int, default=2, help="components of warp.sim's own float32 finite differences")
    c.add_argument("--tol32", type=float, default=1e-3)
    t = commands.add_parser("time", help="B soft bodies in one warp.sim model: timing")
    for flag, kw in (("--batch", dict(type=int, default=1, help="copies of the body B")),
                     ("--soft-contact-max", dict(type=int, default=0, help="particle-shape contact slots (0 = 27 B)")),
                     ("--fresh-cache", dict(action="store_true", help="JIT-compile into a new, empty kernel cache")),
                     ("--min-time", dict(type=float, default=1.0, help="seconds of timed repeats per figure")),
                     ("--min-reps", dict(type=int, default=3, help="at least this many timed repeats")),
                     ("--json", dict(help="also write the JSON to this file"))):
        t.add_argument(flag, **kw)
    args = parser.parse_args()
    return {"check": cmd_check, "time": cmd_time}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
