# steer.torch: the autograd Function (gradcheck in float64, backward = the engine's adjoint
# scaled by the incoming gradient, torch tensors accepted directly through DLPack).
import pytest

np = pytest.importorskip("numpy")
steer = pytest.importorskip("steer", reason="the module steer is not built (STEER_BUILD_PYTHON=OFF or nanobind missing)")
torch = pytest.importorskip("torch", reason="torch is not installed (Debian: python3-torch)")
import steer.torch as st

from conftest import SOURCE_DIR, projectile_config


def _small_projectile():
    c = projectile_config()
    c["model"] = {"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.1, "mass": 1.0, "ground": {"type": "none"}}
    c["simulation"] = dict(c["simulation"], steps=25)
    c["loss"] = {"terminal": [{"state": "position.x", "target": 1.0, "weight": 1.0},
                              {"state": "position.y", "target": 0.2, "weight": 2.0}], "control_effort": 0.01}
    return steer.load(c)


def _inputs(sim, B, seed=0):
    g = torch.Generator().manual_seed(seed)
    x0 = torch.as_tensor(np.tile(sim.x0, (B, 1))) + 0.1 * torch.randn(B, sim.nx, generator=g, dtype=torch.float64)
    u = 0.5 * torch.randn(B, sim.T, sim.nu, generator=g, dtype=torch.float64)
    th = torch.as_tensor(np.tile(sim.theta, (B, 1))).clone()
    return x0, u, th


def test_gradcheck_float64():
    sim = _small_projectile()
    x0, u, th = (t.requires_grad_() for t in _inputs(sim, 2))
    # drag and mass are differentiable θ slots; gradcheck perturbs every entry of x0, u and θ
    assert torch.autograd.gradcheck(lambda a, b, c: st.rollout(sim, a, b, c), (x0, u, th), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_backward_is_the_adjoint_scaled():
    sim = _small_projectile()
    x0, u, th = _inputs(sim, 3, seed=1)
    ref = sim.rollout(x0.numpy(), u.numpy(), th.numpy(), grad=True)
    x0.requires_grad_(), u.requires_grad_()  # θ without a gradient: its slot returns None
    loss = st.rollout(sim, x0, u, th)
    w = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    (loss * w).sum().backward()
    np.testing.assert_array_equal(loss.detach().numpy(), ref.loss)
    np.testing.assert_array_equal(x0.grad.numpy(), w.numpy()[:, None] * ref.grad_x0)
    np.testing.assert_array_equal(u.grad.numpy(), w.numpy()[:, None, None] * ref.grad_u)
    assert th.grad is None


def test_tensors_pass_directly():
    """a CPU tensor reaches the engine through DLPack (no numpy round trip); a wrong dtype is
    refused with the expected one"""
    sim = _small_projectile()
    x0, u, th = _inputs(sim, 2)
    r = sim.rollout(x0, u, th)
    r2 = sim.rollout(x0.numpy(), u.numpy(), th.numpy())
    np.testing.assert_array_equal(r.loss, r2.loss)
    with pytest.raises(ValueError, match="x0: dtype float64 expected"):
        sim.rollout(x0.float(), u, th)


def test_worked_example_with_torch_sgd():
    """the README's worked example as a torch loop: plain SGD (lr 0.05, 200 steps) on v0"""
    sim = steer.load(SOURCE_DIR / "configs" / "projectile.json")
    b = sim.default_batch()
    v = torch.tensor(b.x0[:, 2:4].copy(), requires_grad=True)
    u, th = torch.from_numpy(b.u), torch.from_numpy(b.theta)
    opt = torch.optim.SGD([v], lr=0.05)
    for i in range(200):
        opt.zero_grad()
        x0 = torch.cat([torch.from_numpy(b.x0[:, 0:2]), v], dim=1)
        loss = st.rollout(sim, x0, u, th).sum()
        loss.backward()
        if i == 0:
            assert v.grad[0, 0].item() == pytest.approx(4.5, rel=1e-9)
        opt.step()
    assert f"{v[0, 0].item():.4f}" == "2.0000"


# ---- steer.torch.step: one step inside autograd

def test_step_gradcheck_float64():
    sim = _small_projectile()
    x0, u, th = _inputs(sim, 2, seed=3)
    x = x0.clone().requires_grad_()
    uk = u[:, 0, :].clone().requires_grad_()
    thr = th.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b, c: st.step(sim, a, b, c, 4), (x, uk, thr), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_chained_steps_give_the_rollouts_gradient():
    # T steps chained by torch's autograd, then the config's terminal loss written in torch:
    # the gradient in x0, u and theta is the engine's whole-rollout adjoint (steer.torch.rollout)
    sim = _small_projectile()
    x0, u, th = _inputs(sim, 2, seed=4)
    cfg_loss = [(0, 1.0, 1.0), (1, 0.2, 2.0)]  # position.x -> 1.0 (w 1), position.y -> 0.2 (w 2)
    x0a, ua, tha = (t.clone().requires_grad_() for t in (x0, u, th))
    x = x0a
    for k in range(sim.T):
        x = st.step(sim, x, ua[:, k, :], tha, k)
    effort = 0.5 * 0.01 * (ua ** 2).sum(dim=(1, 2))  # control_effort w_u: sum_k 1/2 w_u |u_k|^2
    loss = sum(0.5 * w * (x[:, i] - t) ** 2 for i, t, w in cfg_loss) + effort
    ref = sim.rollout(x0.numpy(), u.numpy(), th.numpy(), grad=True)
    np.testing.assert_allclose(loss.detach().numpy(), ref.loss, rtol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(x0a.grad.numpy(), ref.grad_x0, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ua.grad.numpy(), ref.grad_u, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(tha.grad.numpy(), ref.grad_theta, rtol=1e-9, atol=1e-12)
