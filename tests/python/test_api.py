# steer from Python: shapes and dtypes, errors, the worked example, gradients against centered
# finite differences, zero-copy outputs and GIL release (docs/python.md).
import threading
import time

import pytest

np = pytest.importorskip("numpy")
steer = pytest.importorskip("steer", reason="the module steer is not built (STEER_BUILD_PYTHON=OFF or nanobind missing)")

from conftest import SOURCE_DIR, projectile_config


@pytest.fixture(scope="module")
def projectile():
    return steer.load(SOURCE_DIR / "configs" / "projectile.json")


def test_shapes_and_names(projectile):
    s = projectile
    assert (s.nx, s.nu, s.ntheta, s.T) == (4, 2, len(s.param_names), 300)
    assert s.state_names[:4] == ["position.x", "position.y", "velocity.x", "velocity.y"]
    assert s.dtype == np.float64
    np.testing.assert_array_equal(s.x0, [0.0, 0.0, 2.5, 1.0])
    b = s.default_batch()
    assert b.x0.shape == (1, 4) and b.u.shape == (1, 300, 2) and b.theta.shape == (1, s.ntheta)
    r = s.rollout(b.x0, b.u, b.theta, grad=True, trajectory_stride=1)
    assert r.loss.shape == (1,) and r.loss.dtype == np.float64
    assert r.grad_x0.shape == (1, 4) and r.grad_u.shape == (1, 300, 2) and r.grad_theta.shape == (1, s.ntheta)
    assert r.trajectory.shape == (1, 301, 4)
    np.testing.assert_array_equal(r.trajectory[0, 0], b.x0[0])
    r = s.rollout(b.x0, b.u, b.theta)
    assert r.grad_x0 is None and r.trajectory is None


def test_worked_example(projectile):
    """README: dL/dv_x = 4.5 at the start; plain gradient descent (eta 0.05, 200 steps) lands on
    v_x = 2.0000 and x_T = 6.0000 (x_T = 3 s v_x, L = 1/2 (x_T - 6)^2)."""
    s = projectile
    b = s.default_batch()
    x0 = b.x0.copy()
    r = s.rollout(x0, b.u, b.theta, grad=True)
    assert r.grad_x0[0, 2] == pytest.approx(4.5, rel=1e-9)
    assert r.loss[0] == pytest.approx(0.5 * 1.5 ** 2, rel=1e-9)
    for _ in range(200):
        g = s.rollout(x0, b.u, b.theta, grad=True).grad_x0
        x0[:, 2:4] -= 0.05 * g[:, 2:4]  # the variables x0.velocity.x and .y
    r = s.rollout(x0, b.u, b.theta, trajectory_stride=300)
    assert f"{x0[0, 2]:.4f}" == "2.0000"
    assert f"{r.trajectory[0, -1, 0]:.4f}" == "6.0000"


def test_batch_rollouts_are_independent(projectile):
    s = projectile
    B = 5
    x0 = np.tile(s.x0, (B, 1))
    x0[:, 2] = np.linspace(1.0, 3.0, B)
    u = np.zeros((B, s.T, s.nu))
    th = np.tile(s.theta, (B, 1))
    r = s.rollout(x0, u, th, grad=True)
    for b in range(B):
        one = s.rollout(x0[b:b + 1], u[b:b + 1], th[b:b + 1], grad=True)
        assert one.loss[0] == r.loss[b]
        np.testing.assert_array_equal(one.grad_x0[0], r.grad_x0[b])
    # x_T = 3 s v_x: L = 1/2 (3 v_x - 6)^2 exactly up to rounding
    np.testing.assert_allclose(r.loss, 0.5 * (3 * x0[:, 2] - 6) ** 2, rtol=1e-9, atol=1e-12)


def test_errors_name_argument_and_shape(projectile):
    s = projectile
    b = s.default_batch()
    with pytest.raises(ValueError, match=r"x0: shape \(1, 4\) expected, got \(1, 3\)"):
        s.rollout(b.x0[:, :3], b.u, b.theta)
    with pytest.raises(ValueError, match=r"u: shape \(1, 300, 2\) expected, got \(1, 299, 2\)"):
        s.rollout(b.x0, b.u[:, :299], b.theta)
    with pytest.raises(ValueError, match=r"theta: dtype float64 expected .*shape \(1, %d\)" % s.ntheta):
        s.rollout(b.x0, b.u, b.theta.astype(np.float32))
    with pytest.raises(ValueError, match=r"x0: shape \(B, 4\) expected"):
        s.rollout(b.x0[0], b.u, b.theta)
    with pytest.raises(ValueError, match="threads: must be >= 0"):
        s.threads = -1
    with pytest.raises(ValueError, match="trajectory_stride: must be in"):
        s.rollout(b.x0, b.u, b.theta, trajectory_stride=301)


def test_config_errors_are_value_errors():
    c = projectile_config()
    c["simulation"] = dict(c["simulation"], dt=-1.0)
    with pytest.raises(ValueError, match=r"simulation\.dt"):
        steer.load(c)
    c = projectile_config()
    c["model"] = dict(c["model"], gravty=9.81)
    with pytest.raises(ValueError, match=r"model\.gravty"):
        steer.load(c)
    with pytest.raises(ValueError):
        steer.load("/nonexistent/config.json")
    with pytest.raises(ValueError, match="config: a path"):
        steer.load(42)


def test_strided_and_list_inputs_match_contiguous(projectile):
    s = projectile
    b = s.default_batch()
    r = s.rollout(b.x0, b.u, b.theta, grad=True)
    big = np.zeros((2, 8))
    big[0, ::2] = b.x0[0]
    strided = big[:1, ::2]  # not C-contiguous: gathered element by element
    assert not strided.flags["C_CONTIGUOUS"]
    r2 = s.rollout(strided, b.u, b.theta.tolist(), grad=True)
    assert r2.loss[0] == r.loss[0]
    np.testing.assert_array_equal(r2.grad_u, r.grad_u)


def _fd_check(sim, x0, u, th, rng, directions=4, eps=1e-6, tol=1e-6, theta_mask=None):
    """centered FD of the loss along random directions against the adjoint's directional
    derivative g.d, Richardson-extrapolated, R = (4 D(eps/2) - D(eps)) / 3, so that its
    O(eps^2) truncation error (large on the robots' stiff springs and ground: 2e-4 relative at
    eps 1e-6) drops to O(eps^4): |R - g.d| <= tol max(|g.d|, |R|) + 1e-9; theta_mask (1 or 0
    per slot) leaves slots out of the directions"""
    r = sim.rollout(x0, u, th, grad=True)

    def central(d, e):
        dx, du, dt = d
        lp = sim.rollout(x0 + e * dx, u + e * du, th + e * dt).loss
        lm = sim.rollout(x0 - e * dx, u - e * du, th - e * dt).loss
        return (lp - lm) / (2 * e)

    for _ in range(directions):
        d = tuple(rng.standard_normal(a.shape) for a in (x0, u, th))
        if theta_mask is not None:
            d = (d[0], d[1], d[2] * theta_mask)
        gd = (r.grad_x0 * d[0]).sum(axis=1) + (r.grad_u * d[1]).sum(axis=(1, 2)) + (r.grad_theta * d[2]).sum(axis=1)
        fd = (4 * central(d, eps / 2) - central(d, eps)) / 3
        assert np.all(np.abs(fd - gd) <= tol * np.maximum(np.abs(gd), np.abs(fd)) + 1e-9), (fd, gd)


def test_gradient_vs_fd_projectile_drag_and_ground():
    c = projectile_config()
    c["model"] = {"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.05, "mass": 1.3, "ground": {"type": "none"}}
    c["loss"] = {"terminal": [{"state": "position.x", "target": 6.0, "weight": 1.0},
                              {"state": "velocity.y", "target": -1.0, "weight": 0.5}],
                 "control_effort": 1e-3}
    sim = steer.load(c)
    rng = np.random.default_rng(3)
    B = 3
    x0 = np.tile(sim.x0, (B, 1)) + 0.1 * rng.standard_normal((B, sim.nx))
    u = 0.3 * rng.standard_normal((B, sim.T, sim.nu))
    th = np.tile(sim.theta, (B, 1))
    _fd_check(sim, x0, u, th, rng)


def test_gradient_vs_fd_mass_spring():
    """robot A (configs/difftaichi_robot_a.json) on a short horizon: every x0, u and theta slot"""
    import json
    c = json.loads((SOURCE_DIR / "configs" / "difftaichi_robot_a.json").read_text())
    c["simulation"]["steps"] = 60
    c["batch"] = {"size": 2, "seed": 1}
    sim = steer.load(c, base_dir=str(SOURCE_DIR / "configs"))
    assert sim.model == "mass_spring"
    b = sim.default_batch()
    rng = np.random.default_rng(5)
    _fd_check(sim, b.x0.copy(), b.u.copy(), b.theta.copy(), rng, directions=2)


def test_ball_joint_names_and_gradient_vs_fd():
    """configs/ball_pendulum.json on 60 steps: the ball's quaternion and body-frame rates are
    the state's slots, its torques the controls, and the gradient in x0, u and theta (the
    massless frames' zero slots left out) agrees with centered finite differences"""
    import json
    c = json.loads((SOURCE_DIR / "configs" / "ball_pendulum.json").read_text())
    c["simulation"]["steps"] = 60
    sim = steer.load(c, base_dir=str(SOURCE_DIR / "configs"))
    assert sim.state_names == ["socket.quat.w", "socket.quat.x", "socket.quat.y", "socket.quat.z",
                               "socket.w.x", "socket.w.y", "socket.w.z"]
    assert (sim.nx, sim.nu) == (7, 3)
    np.testing.assert_array_equal(sim.x0[:4], [1.0, 0.0, 0.0, 0.0])
    b = sim.default_batch()
    rng = np.random.default_rng(7)
    x0 = b.x0.copy()
    x0[:, 4:] = [0.5, -1.0, 2.0]  # spinning: the quaternion leaves the identity
    u = 0.5 * rng.standard_normal(b.u.shape)
    mask = np.array([0.0 if "ball_frame" in n else 1.0 for n in sim.param_names])
    _fd_check(sim, x0, u, b.theta.copy(), rng, directions=3, theta_mask=mask)


def test_outputs_are_the_engines_buffers(projectile):
    """zero-copy: each returned array points at the engine's result vector (the addresses the
    simulator recorded) and does not own its data (a capsule keeps the engine's block alive)"""
    s = projectile
    b = s.default_batch()
    r = s.rollout(b.x0, b.u, b.theta, grad=True, trajectory_stride=1)
    addr = [a.__array_interface__["data"][0] for a in (r.loss, r.grad_x0, r.grad_u, r.grad_theta, r.trajectory)]
    assert addr == list(s._core._buffers)
    for a in (r.loss, r.grad_x0, r.grad_u, r.grad_theta, r.trajectory):
        assert not a.flags["OWNDATA"]
    # the arrays outlive the next call (their block is theirs, not reused)
    loss = r.loss.copy()
    s.rollout(b.x0 * 2, b.u, b.theta)
    np.testing.assert_array_equal(r.loss, loss)


def test_gil_released_during_rollout(projectile):
    """a rollout in one Python thread does not stop another: the main thread's loop runs while
    the worker is inside the engine (with the GIL held it could not run at all there)"""
    s = projectile
    s.threads = 1
    B = 4000
    x0 = np.tile(s.x0, (B, 1))
    u = np.zeros((B, s.T, s.nu))
    th = np.tile(s.theta, (B, 1))
    span = {}

    def work():
        t0 = time.perf_counter()
        s.rollout(x0, u, th, grad=True)
        span["t"] = (t0, time.perf_counter())

    stamps = []
    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    s.threads = 0
    t0, t1 = span["t"]
    assert t1 - t0 > 0.02, "the rollout was too short to tell"
    inside = [x for x in stamps if t0 + 0.25 * (t1 - t0) < x < t0 + 0.75 * (t1 - t0)]
    assert len(inside) > 100, (len(inside), t1 - t0)


def test_float32_config():
    c = projectile_config()
    c["simulation"] = dict(c["simulation"], precision="float32")
    sim = steer.load(c)
    assert sim.dtype == np.float32
    b = sim.default_batch()
    assert b.x0.dtype == np.float32
    r = sim.rollout(b.x0, b.u, b.theta, grad=True)
    assert r.loss.dtype == np.float32 and r.grad_x0.dtype == np.float32
    assert r.grad_x0[0, 2] == pytest.approx(4.5, rel=1e-4)
    with pytest.raises(ValueError, match="x0: dtype float32 expected"):
        sim.rollout(b.x0.astype(np.float64), b.u, b.theta)


def test_version():
    import re
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    assert steer.__version__ == re.search(r"project\(steer VERSION ([0-9.]+)", text).group(1)


def test_data_files_relative_to_the_config(tmp_path, monkeypatch):
    """loss.observations and controls.initial_file are read from the config's folder, not the
    working folder, and the tracking loss is the documented sum
    L = sum_k 1/2 w (x_k - obs(k h))^2 over the states x_0 ... x_T."""
    import json

    folder = tmp_path / "experiment"
    folder.mkdir()
    T, h = 20, 0.01
    # observed x: a line the projectile does not follow, one row per step
    (folder / "obs.csv").write_text("t,position.x\n" + "".join(f"{k * h:.17g},{0.01 * k:.17g}\n" for k in range(T + 1)))
    # per-step controls: a horizontal push that changes at step 10 (nu = 2)
    (folder / "u.csv").write_text("".join("0.5,0\n" if k < 10 else "-0.5,0\n" for k in range(T)))
    cfg = json.loads((SOURCE_DIR / "configs" / "projectile.json").read_text())
    cfg["simulation"]["steps"] = T
    cfg["loss"] = {"observations": {"file": "obs.csv", "weight": 3.0, "interpolation": "none"}}
    cfg["controls"] = {"initial_file": "u.csv"}
    (folder / "cfg.json").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)  # a working folder that does not hold the data files
    s = steer.load(folder / "cfg.json")
    b = s.default_batch()
    np.testing.assert_array_equal(b.u[0, :10, 0], 0.5)
    np.testing.assert_array_equal(b.u[0, 10:, 0], -0.5)
    r = s.rollout(b.x0, b.u, b.theta, trajectory_stride=1)
    x = r.trajectory[0, :, 0]
    expected = sum(0.5 * 3.0 * (x[k] - 0.01 * k) ** 2 for k in range(T + 1))
    assert r.loss[0] == pytest.approx(expected, rel=1e-12, abs=0)
    assert expected > 1e-4  # the term is not trivially zero


BOX_ON_FLOOR = """<mujoco model="box_slide_import">
  <option timestep="0.001" integrator="Euler"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" friction="0.5"/>
    <body name="box" pos="0 0 0.0495">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.15 0.05" mass="1" friction="0.5"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_imported_box_sliding_gradient_vs_fd(tmp_path):
    """An MJCF box (its 8 corners as ground points, the contact law the import derives from the
    file's solref) sliding at 1 m/s on its 4 lower corners for 0.3 s: the gradient of its final x
    in the friction coefficient and the contact stiffness agrees with centered finite differences
    (the validator's ε sweep) to 1e-6 relative, with no contact label."""
    path = tmp_path / "box.xml"
    path.write_text(BOX_ON_FLOOR)
    cfg = {"name": "box_import_grad", "model": {"type": "articulated", "mjcf": str(path)},
           "simulation": {"steps": 300, "precision": "float64"},
           "initial_state": {"v": [1.0, 0, 0, 0, 0, 0]},
           "loss": {"control_effort": 1e-3,
                    "terminal": [{"state": "root.p.x", "target": 0.0, "weight": 1.0}]},
           "variables": {"theta.contact.friction": {"lower": 0.1, "upper": 1.2},
                         "theta.contact.stiffness": {"lower": 100, "upper": 1e5}},
           "validation": {"at": ["initial"], "max_rollouts": 1}}
    try:
        sim = steer.load(cfg)
    except ValueError as e:
        if "MuJoCo" in str(e):
            pytest.skip(f"no MuJoCo import in this build: {e}")
        raise
    pts = sim.effective_config["model"]["contacts"]
    assert len(pts) == 8 and all(p["radius_m"] == 0 for p in pts)
    r = sim.run_check()
    v = r["artifact"]["validation"][0]
    assert r["check_passed"], v
    assert v["max_relative_error"] < 1e-6, v["max_relative_error"]
    assert v["label_counts"] == {}, v["label_counts"]


# ---- the per-step API: Simulator.step and step_vjp (docs/python.md, "One step at a time")

def _robot_a_raw(B=3, steps=40):
    """DiffTaichi's robot A driven by raw activations (its controls), a small batch"""
    import json
    c = json.loads((SOURCE_DIR / "configs" / "difftaichi_robot_a.json").read_text())
    c["model"]["actuation"] = {"type": "raw"}
    c["simulation"] = dict(c["simulation"], steps=steps)
    c["batch"] = {"size": B, "seed": 3}
    c["variables"] = {"controls": {"lower": -1.0, "upper": 1.0}}
    return steer.load(c, base_dir=str(SOURCE_DIR / "configs"))


def test_steps_chain_into_the_rollouts_trajectory():
    # T calls of step() from x0 with the batch's controls are the rollout's states (the scalar
    # step against the engine's batched, possibly SIMD, rollout: round-off apart)
    sim = _robot_a_raw()
    b = sim.default_batch()
    rng = np.random.default_rng(0)
    u = rng.uniform(-1, 1, size=b.u.shape)
    r = sim.rollout(b.x0, u, b.theta, trajectory_stride=1)
    x = b.x0.copy()
    for k in range(sim.T):
        x = sim.step(x, u[:, k, :], b.theta, k)
        np.testing.assert_allclose(x, r.trajectory[:, k + 1, :], rtol=1e-12, atol=1e-12)


def test_step_vjp_matches_central_differences():
    sim = _robot_a_raw()
    b = sim.default_batch()
    rng = np.random.default_rng(1)
    x = sim.step(b.x0, np.zeros((3, sim.nu)), b.theta, 0)
    u = rng.uniform(-1, 1, size=(3, sim.nu))
    lam = rng.normal(size=x.shape)
    ax, au, ath = sim.step_vjp(x, u, b.theta, lam, k=5)
    assert ax.shape == x.shape and au.shape == u.shape and ath.shape == b.theta.shape
    dx, du = rng.normal(size=x.shape), rng.normal(size=u.shape)
    dth = rng.normal(size=b.theta.shape) * np.maximum(np.abs(b.theta), 1.0)
    eps = 1e-6
    fp = sim.step(x + eps * dx, u + eps * du, b.theta + eps * dth, 5)
    fm = sim.step(x - eps * dx, u - eps * du, b.theta - eps * dth, 5)
    fd = ((fp - fm) / (2 * eps) * lam).sum(axis=1)  # per rollout
    adjoint = (ax * dx).sum(axis=1) + (au * du).sum(axis=1) + (ath * dth).sum(axis=1)
    np.testing.assert_allclose(adjoint, fd, rtol=1e-6, atol=1e-8)


def test_step_refuses_bad_inputs_by_name():
    sim = _robot_a_raw()
    b = sim.default_batch()
    u = np.zeros((3, sim.nu))
    with pytest.raises(ValueError, match="theta"):
        sim.step(b.x0, u, b.theta[:, :-1])
    with pytest.raises(ValueError, match="u"):
        sim.step(b.x0, np.zeros((2, sim.nu)), b.theta)
    with pytest.raises(ValueError, match="k: the step index must be >= 0"):
        sim.step(b.x0, u, b.theta, -1)
    with pytest.raises(ValueError, match="adj_next"):
        sim.step_vjp(b.x0, u, b.theta, np.zeros((3, sim.nx + 1)))
