# Python against the CLI on the same config: the artifact's losses and gradients of the initial
# batch (and the losses at the optimum) are the Python rollouts' bit for bit; a bad config gives
# the CLI's message as a ValueError; steer.run and steer.check mirror the commands.
import json
import os
import subprocess

import pytest

np = pytest.importorskip("numpy")
steer = pytest.importorskip("steer", reason="the module steer is not built (STEER_BUILD_PYTHON=OFF or nanobind missing)")

from conftest import SOURCE_DIR, projectile_config


def _cli_run(cli, cfg, tmp_path, command="run"):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    out = tmp_path / "runs"
    p = subprocess.run([cli, command, str(path), "--out", str(out)], capture_output=True, text=True)
    return p, out


def _artifact(out):
    runs = [d for d in os.listdir(out) if not d.startswith(".")]
    assert len(runs) == 1, runs
    return json.loads((out / runs[0] / "artifact.json").read_text())


def _slot(sim, var):
    """(kind, index, step) of an artifact variable name: x0.<state>, theta.<param>, controls.<name>[k]"""
    import re
    kind, _, rest = var.partition(".")
    if kind == "x0":
        return "x0", sim.state_names.index(rest), None
    if kind == "theta":
        return "theta", sim.param_names.index(rest), None
    m = re.fullmatch(r"(.*)\[(\d+)\]", rest)
    assert kind == "controls" and m, var
    return "u", sim.control_names.index(m.group(1)), int(m.group(2))


def _inputs_at(sim, base, rollouts, which):
    """the batch with each listed rollout's variables at their initial or final values"""
    x0, u, th = base.x0.copy(), base.u.copy(), base.theta.copy()
    for e in rollouts:
        b = e["rollout"]
        for name, v in e["variables"].items():
            kind, i, k = _slot(sim, name)
            if kind == "x0":
                x0[b, i] = v[which]
            elif kind == "theta":
                th[b, i] = v[which]
            else:
                u[b, k, i] = v[which]
    return x0, u, th


CASES = {
    # the worked example: gradient descent on v0
    "projectile": lambda: projectile_config(),
    # a swept batch with drag, a landing loss and per-step controls as variables
    "projectile_batch": lambda: dict(
        projectile_config(),
        model={"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.05, "mass": 1.0, "ground": {"type": "none"}},
        simulation={"dt": 0.01, "steps": 40, "precision": "float64"},
        batch={"size": 3, "seed": 2, "sweep": {"x0.velocity.x": [1.0, 2.0, 3.0]}},
        loss={"terminal": [{"state": "position.x", "target": 1.0}], "control_effort": 0.01},
        variables={"x0.velocity.y": {"lower": -10, "upper": 10}, "controls.force.x": {"lower": -5, "upper": 5}},
        optimizer={"method": "adam", "learning_rate": 0.05, "iterations": 5},
        output={"dir": "runs", "trajectory_rollouts": 3}),
}


def _robot_a():
    c = json.loads((SOURCE_DIR / "configs" / "difftaichi_robot_a.json").read_text())
    c["simulation"]["steps"] = 120
    c["batch"] = {"size": 3, "seed": 7, "randomize": {"theta.actuator.weight": {"jitter": 0.1}}}
    c["optimizer"] = dict(c["optimizer"], iterations=3)
    # the artifact lists a rollout's first 64 variables: the biases (11) are all of them
    c["variables"] = {"theta.actuator.bias": {"lower": -5.0, "upper": 5.0}}
    c["output"] = dict(c.get("output", {}), trajectory_rollouts=3)
    return c


def _panda():
    c = json.loads((SOURCE_DIR / "configs" / "panda_free_swing.json").read_text())
    c["model"]["include"] = str(SOURCE_DIR / "configs" / c["model"]["include"])
    c["simulation"]["steps"] = 100
    c["optimizer"] = {"method": "gd", "learning_rate": 0.01, "iterations": 3}
    return c


def _panda_rk4():
    # rk4's adjoint is the dual-number reference over the θ slots asked for: the CLI asks for the
    # variables' slots only, Python for every slot
    c = _panda()
    c["model"]["integrator"] = "rk4"
    c["variables"] = {"x0.v": {"lower": -5, "upper": 5}, "theta.mass": {"lower": 0.1, "upper": 10}}
    return c


CASES["robot_a"] = _robot_a
CASES["panda"] = _panda
CASES["panda_rk4"] = _panda_rk4


@pytest.mark.parametrize("case", sorted(CASES))
def test_bitwise_equal_to_cli(cli, tmp_path, case):
    cfg = CASES[case]()
    p, out = _cli_run(cli, cfg, tmp_path)
    assert p.returncode in (0, 1), p.stderr  # 1: a check failed; the numbers are still the run's
    art = _artifact(out)
    sim = steer.load(cfg)
    base = sim.default_batch()
    rollouts = art["result"]["rollouts"]
    assert rollouts
    x0, u, th = _inputs_at(sim, base, rollouts, "initial")
    r = sim.rollout(x0, u, th, grad=True)
    for e in rollouts:
        b = e["rollout"]
        assert r.loss[b] == e["loss_initial"], (case, b)
        for name, v in e["variables"].items():
            kind, i, k = _slot(sim, name)
            g = {"x0": lambda: r.grad_x0[b, i], "theta": lambda: r.grad_theta[b, i], "u": lambda: r.grad_u[b, k, i]}[kind]()
            assert g == v["gradient_initial"], (case, b, name, g, v["gradient_initial"])
    # the optimum's losses: every variable must be listed to rebuild the final inputs
    assert art["result"]["variables_listed_per_rollout"] < 64
    x0, u, th = _inputs_at(sim, base, rollouts, "final")
    r = sim.rollout(x0, u, th)
    for e in rollouts:
        assert r.loss[e["rollout"]] == e["loss_final"], (case, e["rollout"])


def test_config_error_is_the_clis_message(cli, tmp_path):
    cfg = projectile_config()
    cfg["simulation"] = dict(cfg["simulation"], steps=0)
    p, _ = _cli_run(cli, cfg, tmp_path, command="check")
    assert p.returncode == 2
    with pytest.raises(ValueError) as e:
        steer.load(tmp_path / "config.json")
    msg = str(e.value)
    assert "simulation.steps" in msg
    assert msg in p.stderr, (msg, p.stderr)


def test_run_and_check_mirror_the_commands(tmp_path):
    out = steer.run(projectile_config(), out_dir=str(tmp_path / "runs"))
    art = out["artifact"]
    assert os.path.isfile(os.path.join(out["artifact_dir"], "artifact.json"))
    v = art["result"]["rollouts"][0]["variables"]["x0.velocity.x"]
    assert f"{v['final']:.4f}" == "2.0000" and v["gradient_initial"] == pytest.approx(4.5, rel=1e-9)
    assert out["check_passed"]
    chk = steer.check(projectile_config())
    assert chk["artifact_dir"] == "" and chk["check_passed"]
    assert chk["artifact"]["validation"]


def test_check_on_given_variables():
    """Simulator.check runs the validator at given variable values: at the start it is the
    report `steer check` writes (the same FD and adjoint numbers), elsewhere it checks there"""
    sim = steer.load(projectile_config())
    assert sim.variable_names == ["x0.velocity.x", "x0.velocity.y"]
    v = sim.variables()
    np.testing.assert_array_equal(v.initial, [[2.5, 1.0]])
    rep = sim.check()
    cli = steer.check(projectile_config())["artifact"]["validation"][0]
    assert rep["all_passed"] and cli["all_passed"]
    for a, b in zip(rep["rollouts"], cli["rollouts"]):
        assert (a["fd"], a["directional_adjoint"]) == (b["fd"], b["directional_adjoint"])
    at = sim.check(np.array([[2.0, 0.5]]))
    assert at["all_passed"]
    assert at["rollouts"][0]["directional_adjoint"] != rep["rollouts"][0]["directional_adjoint"]
    with pytest.raises(ValueError, match=r"variables: shape \(1, 2\) expected, got \(1, 3\)"):
        sim.check(np.zeros((1, 3)))
