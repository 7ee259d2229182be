"""steer.torch: rollouts inside PyTorch's autograd.

    import torch, steer, steer.torch
    sim = steer.load("configs/projectile.json")
    x0 = torch.tensor(sim.x0).repeat(4, 1).requires_grad_()
    loss = steer.torch.rollout(sim, x0, u, theta)      # (B,), differentiable in x0, u and theta
    loss.sum().backward()                              # x0.grad = dL/dx0 from steer's adjoint

The forward pass runs steer's batch (with the adjoint when any input requires a gradient) and
keeps dL/dx0, dL/du, dL/dtheta; backward scales them by the incoming gradient of each rollout's
loss (a vector-Jacobian product, dL_b/d(inputs of b) only depends on rollout b). CPU tensors
are passed to the engine through DLPack without a copy on the way in, and its result buffers
come back as tensors sharing their memory. Second derivatives are not available.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import torch as _torch

from . import Simulator

__all__ = ["rollout", "Rollout"]


def _engine_input(name: str, t: Any, sim: Simulator) -> Any:
    if not isinstance(t, _torch.Tensor):
        return _torch.as_tensor(t, dtype=_dtype(sim))
    if t.device.type != "cpu":
        raise ValueError(f"{name}: a CPU tensor expected (device {t.device}); move it with .cpu()")
    return t.detach()


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
            ctx.save_for_backward(_torch.from_numpy(r.grad_x0), _torch.from_numpy(r.grad_u),
                                  _torch.from_numpy(r.grad_theta))
        return _torch.from_numpy(r.loss)

    @staticmethod
    @_torch.autograd.function.once_differentiable
    def backward(ctx: Any, g: _torch.Tensor) -> Tuple[Optional[_torch.Tensor], ...]:
        gx0, gu, gth = ctx.saved_tensors
        g = g.to(gx0.dtype)
        out_x0 = g[:, None] * gx0 if ctx.needs_input_grad[1] else None
        out_u = g[:, None, None] * gu if ctx.needs_input_grad[2] else None
        out_th = g[:, None] * gth if ctx.needs_input_grad[3] else None
        return None, out_x0, out_u, out_th


def rollout(sim: Simulator, x0: _torch.Tensor, u: _torch.Tensor, theta: _torch.Tensor) -> _torch.Tensor:
    """Per-rollout losses (B,) of sim's rollouts, differentiable in x0, u and theta (CPU tensors
    of sim's dtype and shapes (B, nx), (B, T, nu), (B, ntheta))."""
    return Rollout.apply(sim, x0, u, theta)
