"""steer.torch: rollouts inside PyTorch's autograd.

    import torch, steer, steer.torch
    sim = steer.load("configs/projectile.json")
    x0 = torch.tensor(sim.x0).repeat(4, 1).requires_grad_()
    loss = steer.torch.rollout(sim, x0, u, theta)      # (B,), differentiable in x0, u and theta
    loss.sum().backward()                              # x0.grad = dL/dx0 from steer's adjoint

steer.torch.step(sim, x, u, theta, k) is one step, x_next (B, nx), differentiable in x, u and
theta through the model's hand adjoint (Simulator.step_vjp): a controller written in torch
closes the loop step by step, and torch's autograd chains the steps (float64, CPU):

    x = x0
    for k in range(T):
        x = steer.torch.step(sim, x, policy(x), theta, k)
    loss = -x[:, 0].mean(); loss.backward()          # the policy's weights get dL/dW

The rollout's forward pass runs steer's batch (with the adjoint when any input requires a gradient) and
keeps dL/dx0, dL/du, dL/dtheta; backward scales them by the incoming gradient of each rollout's
loss (a vector-Jacobian product, dL_b/d(inputs of b) only depends on rollout b). Contiguous
tensors are read by the engine in place through DLPack (no copy; others are copied once), and
its result buffers come back as tensors sharing their memory. On a CUDA build with the cuda
backend, CUDA tensors stay on the device (made contiguous there if they are not) and the
losses and gradients are CUDA tensors; a CPU build refuses them, naming the argument. Second
derivatives are not available.
"""
from __future__ import annotations

import weakref
from typing import Any, Optional, Tuple

import torch as _torch

from . import Simulator

__all__ = ["rollout", "Rollout", "step", "Step"]


def _engine_input(name: str, t: Any, sim: Simulator) -> Any:
    if not isinstance(t, _torch.Tensor):
        return _torch.as_tensor(t, dtype=_dtype(sim))
    # the engine reads a device tensor in place, so it needs C order there
    return t.detach().contiguous() if t.device.type == "cuda" else t.detach()


def _tensor(a: Any) -> _torch.Tensor:
    # numpy arrays over the engine's host buffers, or CUDA tensors already (Simulator.rollout)
    return a if isinstance(a, _torch.Tensor) else _torch.from_numpy(a)


def _dtype(sim: Simulator) -> "_torch.dtype":
    return _torch.float32 if sim.dtype.name == "float32" else _torch.float64


class Rollout(_torch.autograd.Function):
    """loss (B,) = steer rollouts of (x0 (B, nx), u (B, T, nu), theta (B, ntheta))."""

    @staticmethod
    def forward(ctx: Any, sim: Simulator, x0: _torch.Tensor, u: _torch.Tensor, theta: _torch.Tensor) -> _torch.Tensor:
        want = any(ctx.needs_input_grad[1:])
        r = sim.rollout(_engine_input("x0", x0, sim), _engine_input("u", u, sim),
                        _engine_input("theta", theta, sim), grad=want)
        if want:
            ctx.save_for_backward(_tensor(r.grad_x0), _tensor(r.grad_u), _tensor(r.grad_theta))
        return _tensor(r.loss)

    @staticmethod
    @_torch.autograd.function.once_differentiable
    def backward(ctx: Any, g: _torch.Tensor) -> Tuple[Optional[_torch.Tensor], ...]:
        gx0, gu, gth = ctx.saved_tensors
        g = g.to(gx0.dtype)
        out_x0 = g[:, None] * gx0 if ctx.needs_input_grad[1] else None
        out_u = g[:, None, None] * gu if ctx.needs_input_grad[2] else None
        out_th = g[:, None] * gth if ctx.needs_input_grad[3] else None
        return None, out_x0, out_u, out_th


class Step(_torch.autograd.Function):
    """x_next (B, nx) = one steer step of (x (B, nx), u (B, nu), theta (B, ntheta)) at index k."""

    @staticmethod
    def forward(ctx: Any, sim: Simulator, x: _torch.Tensor, u: _torch.Tensor, theta: _torch.Tensor,
                k: int) -> _torch.Tensor:
        # a weak reference: a graph kept past the end of a script must not keep the engine alive
        # (nanobind reports instances alive at interpreter exit as leaks)
        ctx.sim, ctx.k = weakref.ref(sim), k
        xs, us, ths = (t.detach().cpu().to(_torch.float64) for t in (x, u, theta))
        ctx.save_for_backward(xs, us, ths)
        ctx.like = x
        return _torch.from_numpy(sim.step(xs.numpy(), us.numpy(), ths.numpy(), k)).to(x.dtype)

    @staticmethod
    @_torch.autograd.function.once_differentiable
    def backward(ctx: Any, g: _torch.Tensor) -> Tuple[Optional[_torch.Tensor], ...]:
        xs, us, ths = ctx.saved_tensors
        sim = ctx.sim()
        if sim is None:
            raise RuntimeError("steer.torch.step: the Simulator of this step was deleted before backward()")
        ax, au, ath = sim.step_vjp(xs.numpy(), us.numpy(), ths.numpy(),
                                       g.detach().cpu().to(_torch.float64).contiguous().numpy(), ctx.k)
        out = [_torch.from_numpy(a).to(ctx.like.dtype) if need else None
               for a, need in zip((ax, au, ath), ctx.needs_input_grad[1:4])]
        return (None, *out, None)


def step(sim: Simulator, x: _torch.Tensor, u: _torch.Tensor, theta: _torch.Tensor, k: int = 0) -> _torch.Tensor:
    """One step of B states, x_next (B, nx), differentiable in x (B, nx), u (B, nu) and theta
    (B, ntheta) (CPU tensors; float64 inside, returned in x's dtype); k is the step index, whose
    time k * dt the step reads (a sinusoid actuation, a tracking term). Chaining T steps with a
    torch policy between them trains that policy through steer's adjoint."""
    if not isinstance(theta, _torch.Tensor):
        theta = _torch.as_tensor(theta, dtype=_torch.float64)
    return Step.apply(sim, x, u, theta, int(k))


def rollout(sim: Simulator, x0: _torch.Tensor, u: _torch.Tensor, theta: _torch.Tensor) -> _torch.Tensor:
    """Per-rollout losses (B,) of sim's rollouts, differentiable in x0, u and theta (tensors of
    sim's dtype and shapes (B, nx), (B, T, nu), (B, ntheta); CPU tensors, or CUDA tensors on a
    CUDA build with the cuda backend, where the losses and gradients stay on the device)."""
    return Rollout.apply(sim, x0, u, theta)
