# The test-only model (tests/models/oscillator/) from Python: the module built from
# python/steer_ext.cpp unchanged, with the model registered by its one line (tests/models/oscillator/CMakeLists.txt),
# loads it and returns its gradients, which agree with centered finite differences; the
# validator runs on it as on any model.
import json

import pytest

np = pytest.importorskip("numpy")
steer = pytest.importorskip("steer", reason="the module steer is not built (STEER_BUILD_PYTHON=OFF or nanobind missing)")

from conftest import SOURCE_DIR

CONFIG = SOURCE_DIR / "tests" / "models" / "oscillator" / "oscillator.json"


def test_loads_and_names_its_slots():
    s = steer.load(CONFIG)
    assert (s.nx, s.nu, s.ntheta, s.T) == (2, 1, 3, 300)
    assert s.state_names == ["position", "velocity"]
    assert s.param_names == ["stiffness", "damping", "mass"]


def test_gradients_match_finite_differences():
    """Every x0, theta and control entry of both rollouts: |fd - g| <= 1e-6 max(|g|, |fd|) + 1e-9."""
    s = steer.load(CONFIG)
    b = s.default_batch()
    x0, u, th = (np.array(a) for a in (b.x0, b.u, b.theta))
    u[:, :40, 0] = 0.7  # a push, so the control gradient is not trivially that of a free oscillation
    r = s.rollout(x0, u, th, grad=True)
    assert np.all(np.isfinite(r.loss))

    def loss(x0_, u_, th_):
        return np.array(s.rollout(x0_, u_, th_).loss)

    eps = 1e-6
    for name, arr, grad in (("x0", x0, r.grad_x0), ("theta", th, r.grad_theta), ("u", u, r.grad_u)):
        it = np.ndindex(arr.shape[1:]) if name != "u" else [(k, 0) for k in (0, 17, 150, 299)]
        for idx in it:
            plus, minus = arr.copy(), arr.copy()
            h = eps * max(1.0, float(np.max(np.abs(arr[(slice(None),) + tuple(idx)]))))
            plus[(slice(None),) + tuple(idx)] += h
            minus[(slice(None),) + tuple(idx)] -= h
            args_p = [x0, u, th]
            args_m = [x0, u, th]
            pos = {"x0": 0, "u": 1, "theta": 2}[name]
            args_p[pos], args_m[pos] = plus, minus
            fd = (loss(*args_p) - loss(*args_m)) / (2 * h)
            g = grad[(slice(None),) + tuple(idx)]
            assert np.all(np.abs(fd - g) <= 1e-6 * np.maximum(np.abs(g), np.abs(fd)) + 1e-9), (name, idx, fd, g)


def test_a_dict_config_and_the_validator():
    c = json.loads(CONFIG.read_text())
    c["batch"] = {"size": 1, "seed": 1}
    s = steer.load(c)
    report = s.check()
    assert report["all_passed"] is True and report["rollouts_passed"] == 1, report
    assert report["label_counts"] == {}, report["label_counts"]
