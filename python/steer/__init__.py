"""steer from Python: batched differentiable rollouts as arrays.

    import numpy as np, steer
    sim = steer.load("configs/projectile.json")      # a path or a dict, checked as the CLI checks it
    b = sim.default_batch()                           # the config's batch: x0 (B, nx), u (B, T, nu), theta (B, ntheta)
    r = sim.rollout(b.x0, b.u, b.theta, grad=True)    # r.loss (B,), r.grad_x0, r.grad_u, r.grad_theta

Arrays are float64 or float32 as the config's simulation.precision says. Inputs are read by
the engine in place, without a copy, when they are C-contiguous arrays of that dtype (numpy
through the buffer protocol; torch, jax and others through DLPack); any other layout is copied
once into C order first. The outputs are numpy arrays over the engine's own result buffers (no
copy). On a CUDA build, CUDA device arrays (torch CUDA tensors, ...) stay on the device. The GIL
is released while rollouts run. See docs/python.md.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from . import _steer

__version__: str = _steer.__version__

__all__ = ["load", "run", "check", "Simulator", "RolloutResult", "Batch", "__version__"]


@dataclass(frozen=True)
class Batch:
    """A batch of rollouts' inputs: x0 (B, nx), u (B, T, nu), theta (B, ntheta)."""

    x0: np.ndarray
    u: np.ndarray
    theta: np.ndarray


@dataclass(frozen=True)
class _Variables:
    """The config's variables: initial (B, nv), lower and upper bounds (nv,)."""

    initial: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


@dataclass(frozen=True)
class RolloutResult:
    """What a batch of rollouts returns.

    loss: (B,) per-rollout loss. With grad=True: grad_x0 (B, nx), grad_u (B, T, nu),
    grad_theta (B, ntheta), the exact adjoint gradients of each rollout's loss. With
    trajectory_stride s > 0: trajectory (B, T//s + 1, nx), the states x_0, x_s, x_2s, ...
    event_step: per rollout, the landing loss's crossing step (-1: none); nonfinite: 1 where
    the loss or a state became inf/NaN. engine_seconds: the time of the engine's batch call
    alone (without the binding's checks and copies).
    """

    loss: np.ndarray
    grad_x0: Optional[np.ndarray] = None
    grad_u: Optional[np.ndarray] = None
    grad_theta: Optional[np.ndarray] = None
    trajectory: Optional[np.ndarray] = None
    event_step: Sequence[int] = ()
    nonfinite: Sequence[int] = ()
    engine_seconds: float = 0.0


def _as_input(name: str, a: Any, dtype: np.dtype) -> Any:
    # arrays (numpy, torch, jax: anything with the buffer protocol or DLPack) go to the engine as
    # they are, so a wrong dtype is refused there with the expected shape; plain Python numbers
    # and lists become arrays of the simulator's dtype
    if isinstance(a, (list, tuple, float, int)):
        return np.asarray(a, dtype=dtype)
    if hasattr(a, "__dlpack__") or hasattr(a, "__array_interface__") or isinstance(a, memoryview):
        return a
    raise ValueError(f"{name}: an array (numpy, torch, jax or a nested list) expected, got {type(a).__name__}")


def _framework_of(like: Any, out: Any) -> Any:
    # host results are numpy arrays already; device results (DLPack objects over the engine's
    # device block) become arrays of the framework x0 came from, sharing the memory
    if isinstance(out, np.ndarray):
        return out
    module = type(like).__module__.split(".")[0]
    if module == "torch":
        import torch
        return torch.from_dlpack(out)
    if module in ("jax", "jaxlib"):
        import jax.dlpack
        return jax.dlpack.from_dlpack(out)
    return out


class Simulator:
    """One experiment config, ready to simulate batches of rollouts.

    Attributes: nx, nu, ntheta, T, dt, dtype, state_names, control_names, param_names (and their
    units), x0 / u / theta (the config's nominal values: (nx,), (nu,) held at every step, (ntheta,)),
    batch_size (the config's B), backend, threads (settable; 0 = all cores).
    """

    def __init__(self, core: Any, source: str):
        self._core = core
        self.source = source
        info = core._info
        self.name: str = info["name"]
        self.model: str = info["model"]
        self.state_names: list = list(info["state_names"])
        self.state_units: list = list(info["state_units"])
        self.control_names: list = list(info["control_names"])
        self.control_units: list = list(info["control_units"])
        self.param_names: list = list(info["param_names"])
        self.param_units: list = list(info["param_units"])
        self.T: int = int(info["T"])
        self.dt: float = float(info["dt"])
        self.batch_size: int = int(info["batch_size"])
        self.precision: str = info["precision"]
        self.dtype = np.dtype(np.float32 if core._float32 else np.float64)
        self.x0 = np.asarray(info["x0"], dtype=self.dtype)
        self.theta = np.asarray(info["theta"], dtype=self.dtype)
        self.u = np.asarray(info["u"], dtype=self.dtype)

    @property
    def nx(self) -> int:
        return len(self.state_names)

    @property
    def nu(self) -> int:
        return len(self.control_names)

    @property
    def ntheta(self) -> int:
        return len(self.param_names)

    @property
    def threads(self) -> int:
        """CPU threads the rollouts use (0: all cores)."""
        return self._core.threads

    @threads.setter
    def threads(self, n: int) -> None:
        self._core.threads = int(n)

    @property
    def backend(self) -> str:
        return self._core.backend

    @property
    def effective_config(self) -> dict:
        """The config with every default filled in, as the artifact records it."""
        return self._core._effective_config

    def default_batch(self) -> Batch:
        """The config's batch after its sweeps and random draws (the CLI's starting batch)."""
        d = self._core._default_batch()
        return Batch(d["x0"], d["u"], d["theta"])

    def rollout(self, x0: Any, u: Any, theta: Any, grad: bool = False, trajectory_stride: int = 0) -> RolloutResult:
        """Simulates B rollouts: x0 (B, nx), u (B, T, nu), theta (B, ntheta) in the config's dtype.

        Returns the per-rollout loss (B,); with grad=True also dL/dx0, dL/du and dL/dtheta; with
        trajectory_stride s > 0 the states every s steps (B, T//s + 1, nx). ValueError names the
        argument, the expected shape and dtype when an input does not fit.

        Memory: an input that is C-contiguous, aligned and of the config's dtype (numpy, a CPU
        torch tensor, a jax CPU array, anything with the buffer protocol or DLPack) is read by the
        engine in place, with no copy; do not write to it from another thread while the call
        runs. Any other layout (a transposed or sliced view, a nested list) is copied into C
        order once. The results are numpy arrays over the engine's result buffers. On a CUDA
        build with the cuda backend, CUDA device arrays (all three on one device, C-contiguous)
        are read in place on the device and the results are device arrays too: torch tensors
        when x0 is a torch tensor, jax arrays when it is a jax array, else objects with
        __dlpack__. A CPU build refuses device arrays, naming the argument.
        """
        d = self._core._rollout(_as_input("x0", x0, self.dtype), _as_input("u", u, self.dtype),
                                _as_input("theta", theta, self.dtype), bool(grad), int(trajectory_stride))
        arrays = {k: _framework_of(x0, d[k]) if k in d else None
                  for k in ("loss", "grad_x0", "grad_u", "grad_theta", "trajectory")}
        return RolloutResult(**arrays, event_step=d["event_step"], nonfinite=d["nonfinite"],
                             engine_seconds=d["engine_seconds"])

    def step(self, x: Any, u: Any, theta: Any, k: int = 0) -> np.ndarray:
        """One step of B states: x_next (B, nx) = f(k, x, u, theta) for x (B, nx), u (B, nu),
        theta (B, ntheta) at step index k (the step's time is k * dt: a sinusoid actuation or a
        tracking term reads it).

        The per-step API for a controller of your own (steer.torch.step): always float64 on the
        CPU, whatever the config's precision and backend, each rollout on its own thread. Any
        array layout is accepted (copied into C order). ValueError names the argument, the
        expected shape and dtype when an input does not fit."""
        return self._core._step(np.asarray(x, dtype=np.float64), np.asarray(u, dtype=np.float64),
                                np.asarray(theta, dtype=np.float64), int(k))

    def step_vjp(self, x: Any, u: Any, theta: Any, adj_next: Any, k: int = 0) -> tuple:
        """The vector-Jacobian product of step() at (x, u, theta, k) for adj_next (B, nx), the
        gradient of a loss with respect to x_next: returns (adj_x (B, nx), adj_u (B, nu),
        adj_theta (B, ntheta)), (dx_next/dx)^T adj_next and likewise, from the model's hand
        adjoint (the one the rollouts' gradients use), float64 on the CPU."""
        d = self._core._step_vjp(np.asarray(x, dtype=np.float64), np.asarray(u, dtype=np.float64),
                                 np.asarray(theta, dtype=np.float64),
                                 np.asarray(adj_next, dtype=np.float64), int(k))
        return d["adj_x"], d["adj_u"], d["adj_theta"]

    def run(self, out_dir: Optional[str] = None, threads: Optional[int] = None, write: bool = True,
            progress: bool = False) -> dict:
        """`steer run` on this config: validate, optimize, validate, write the artifact folder.

        Returns {"artifact": dict, "artifact_dir": str, "summary": str, "check_passed": bool}.
        """
        return self._core._run("run", out_dir or "", -1 if threads is None else int(threads), bool(write), bool(progress))

    def run_check(self, out_dir: Optional[str] = None, threads: Optional[int] = None, write: bool = False,
                  progress: bool = False) -> dict:
        """`steer check` on this config: the validator at the start, no optimization. Returns the
        same dict as run(); check_passed says whether every checked rollout passed, and
        artifact["validation"] holds the reports. Nothing is written unless write=True."""
        return self._core._run("check", out_dir or "", -1 if threads is None else int(threads), bool(write), bool(progress))

    @property
    def variable_names(self) -> list:
        """The config's optimization variables, flattened as the CLI's problem flattens them
        ("x0.velocity.x", "theta.drag", "controls.force.x[12]")."""
        return list(self._core._variable_names)

    def variables(self) -> "_Variables":
        """The variables' start (B, nv) as the CLI starts from it, with their bounds (nv,):
        returns a namespace with initial, lower, upper."""
        d = self._core._variables()
        return _Variables(d["initial"], d["lower"], d["upper"])

    def check(self, variables: Any = None, stage: str = "python") -> dict:
        """The validator (docs/validation.md) at the given values of the config's variables,
        shape (B, nv) float64 (default: their start): directional centered FD with the epsilon
        sweep, and every label, as `steer check` runs it. Returns the report as the artifact's
        validation entry has it (passed, per-rollout errors and labels)."""
        if variables is None:
            variables = self.variables().initial
        return self._core._check_at(_as_input("variables", variables, np.dtype(np.float64)), stage)

    def __repr__(self) -> str:
        return (f"steer.Simulator({self.name!r}, model={self.model}, nx={self.nx}, nu={self.nu}, "
                f"ntheta={self.ntheta}, T={self.T}, dtype={self.dtype.name}, B={self.batch_size})")


ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def load(config: ConfigLike, base_dir: Optional[str] = None) -> Simulator:
    """Reads an experiment config, from a JSON file's path or a dict, and checks it as `steer run`
    does. A bad config raises ValueError with the CLI's message (the key path and the accepted
    range). base_dir: where a dict's model.include is looked up (default: the working folder)."""
    if isinstance(config, Mapping):
        text = json.dumps(config)
        return Simulator(_steer._load_text(text, "<dict>", base_dir or os.getcwd()), "<dict>")
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        return Simulator(_steer._load_path(path), path)
    raise ValueError(f"config: a path (str) or a dict expected, got {type(config).__name__}")


def run(config: ConfigLike, **kwargs: Any) -> dict:
    """`steer run CONFIG`: load(config).run(**kwargs)."""
    return load(config).run(**kwargs)


def check(config: ConfigLike, **kwargs: Any) -> dict:
    """`steer check CONFIG`: load(config).run_check(**kwargs)."""
    return load(config).run_check(**kwargs)
