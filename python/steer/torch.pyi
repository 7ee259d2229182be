# Type stubs of steer.torch (python/steer/torch.py).
from typing import Any

import torch

from . import Simulator

class Rollout(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, sim: Simulator, x0: torch.Tensor, u: torch.Tensor, theta: torch.Tensor) -> torch.Tensor: ...
    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[Any, ...]: ...

def rollout(sim: Simulator, x0: torch.Tensor, u: torch.Tensor, theta: torch.Tensor) -> torch.Tensor: ...

class Step(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, sim: Simulator, x: torch.Tensor, u: torch.Tensor, theta: torch.Tensor, k: int) -> torch.Tensor: ...
    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[Any, ...]: ...

def step(sim: Simulator, x: torch.Tensor, u: torch.Tensor, theta: torch.Tensor, k: int = ...) -> torch.Tensor: ...
